import { readdir } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { errorOf, firstPrompt, sessionIdOf, texts } from "../../testing/provider-turns.js";
import { useStandInAdapter } from "../../testing/stand-in-adapter.js";
import { discoverStandIn } from "../../testing/stand-in-discovery.js";
import { createOpencodeAdapter } from "./opencode-adapter.js";

const STAND_IN_DIRECTORY = fileURLToPath(new URL("../../../../../test/stand-ins/opencode/", import.meta.url));
const STAND_IN = path.join(STAND_IN_DIRECTORY, "opencode");
/** Answers as the session's MCP server does, from a fixed table (test/stand-ins/pedelec-mcp). */
const MCP_STAND_IN = fileURLToPath(new URL("../../../../../test/stand-ins/pedelec-mcp/pedelec-mcp.mjs", import.meta.url));

const standIn = useStandInAdapter({
  prefix: "pedelec-opencode-",
  stateFolders: { XDG_DATA_HOME: "opencode-data" },
  executablePath: STAND_IN,
  effortArgv: ["--variant", "medium"],
  createAdapter: () => createOpencodeAdapter({ killGraceMs: 500 }),
  toolServer: { command: process.execPath, args: [MCP_STAND_IN], envNames: [] },
});
const { turn, request: turnRequest } = standIn;

describe("access modes", () => {
  it("gives a sandboxed agent no shell at all, Pedelec's own commands included, and lets a Full Access agent run one", async () => {
    for (const command of ["cat /etc/hostname", "pedelec-cli tool-spec add_todo"]) {
      const sandboxed = await turn({ prompt: `bash: ${command}` });
      expect(sandboxed.outcome).toEqual({ ok: true });
      expect(texts(sandboxed.events).at(-1)).toMatch(
        /^Bash denied: The user has specified a rule which prevents you from using this specific tool call/,
      );
      const activities = sandboxed.events.flatMap((event) => (event.type === "activity" ? [event.activity.status] : []));
      expect(activities).toEqual(["started", "failed"]);
    }

    const full = await turn({ prompt: "bash: echo hello from the host", access: "full" });
    expect(texts(full.events).at(-1)).toBe("Bash exit 0: hello from the host");
  });

  it("passes the sandbox flags and permissions to the CLI, and the permissive flag only for Full Access", async () => {
    const sandboxed = await turn({ prompt: "report-args", model: "anthropic/claude-sonnet-4-5" });
    expect(JSON.parse(texts(sandboxed.events)[0] ?? "")).toEqual([
      "run",
      "--format",
      "json",
      "--model",
      "anthropic/claude-sonnet-4-5",
      "--variant",
      "medium",
    ]);
    const full = await turn({ prompt: "report-args", access: "full" });
    expect(JSON.parse(texts(full.events)[0] ?? "")).toEqual(["run", "--format", "json", "--dangerously-skip-permissions", "--variant", "medium"]);
    // The sandbox rules travel in the environment; a Full Access run gets none of them.
    const fullEnv = await turn({
      prompt: "bash: printenv OPENCODE_PERMISSION OPENCODE_DISABLE_PROJECT_CONFIG OPENCODE_CONFIG_PROJECT_DISABLE",
      access: "full",
    });
    expect(texts(fullEnv.events).at(-1)).toBe("Bash exit 1: ");
  });
});

describe("opencode adapter with the stand-in CLI", () => {
  it("discovers the stand-in through PEDELEC_PROVIDER_PATH", async () => {
    const discovery = await discoverStandIn(createOpencodeAdapter(), STAND_IN_DIRECTORY, standIn.env.HOME);
    expect(discovery).toEqual({ available: true, executablePath: STAND_IN, version: "1.18.33", error: null });
  });

  it("answers, then resumes the same session on the next turn", async () => {
    const first = await turn({ prompt: firstPrompt("reply: Hello from the stand-in.") });
    expect(first.outcome).toEqual({ ok: true });
    const sessionId = sessionIdOf(first.events);
    expect(sessionId).toMatch(/^ses_[0-9a-f]{12}[A-Za-z0-9]{14}$/);
    expect(texts(first.events)).toEqual(["Hello from the stand-in."]);
    expect(first.events.some((event) => event.type === "text-delta")).toBe(false);

    const second = await turn({ prompt: "report-resume", providerSessionId: sessionId ?? null });
    expect(second.outcome).toEqual({ ok: true });
    expect(sessionIdOf(second.events)).toBe(sessionId);
    expect(texts(second.events)).toEqual([`resumed=${sessionId}`]);
    const stored = await readdir(path.join(standIn.env.XDG_DATA_HOME ?? "", "opencode", "stand-in-sessions"));
    expect(stored).toEqual([`${sessionId}.json`]);
  });

  it("delivers the prompt on stdin only: the model sees exactly the prompt", async () => {
    const { events } = await turn({ prompt: "just this text" });
    expect(texts(events)).toEqual(["echo: just this text"]);
  });

  it("calls a page tool through the session's MCP server and reports it as a tool activity", async () => {
    const first = await turn({ prompt: firstPrompt("reply: ready") });
    const sessionId = sessionIdOf(first.events) ?? null;
    const { outcome, events } = await turn({ prompt: `call-tool add_card {"title":"Buy milk"}`, providerSessionId: sessionId });
    expect(outcome).toEqual({ ok: true });
    expect(await standIn.pedelecCliArgv()).toEqual(["mcp-call", "add_card", '{"title":"Buy milk"}']);
    const activities = events.flatMap((event) => (event.type === "activity" ? [event.activity] : []));
    expect(activities.map(({ kind, status }) => ({ kind, status }))).toEqual([
      { kind: "tool", status: "started" },
      { kind: "tool", status: "completed" },
    ]);
    expect(activities.every((activity) => activity.title.includes("pedelec_add_card"))).toBe(true);
    expect(texts(events)).toEqual(['Tool add_card returned: {"id":"card-4","title":"Buy milk"}']);
  });

  it("reports a tool call that failed as a failed activity and lets the agent answer", async () => {
    const { outcome, events } = await turn({ prompt: firstPrompt("call-tool broken {}") });
    expect(outcome).toEqual({ ok: true });
    const activities = events.flatMap((event) => (event.type === "activity" ? [event.activity.status] : []));
    expect(activities).toEqual(["started", "failed"]);
    expect(texts(events)[0]).toBe('Tool broken failed: {"error":{"code":"TOOL_HANDLER_ERROR","message":"handler threw"}}');
  });

  it("reads a tool's schema from the session's MCP server", async () => {
    const { outcome, events } = await turn({ prompt: firstPrompt("tool-spec add_card_spec") });
    expect(outcome).toEqual({ ok: true });
    expect(texts(events)[0]).toBe('Spec: {"type":"object"}');
  });

  it("fails with PROVIDER_FAILED and the stderr when the CLI exits non-zero", async () => {
    const { outcome } = await turn({ prompt: "exit-with 3 model overloaded, try later" });
    const error = errorOf(outcome);
    expect(error.code).toBe("PROVIDER_FAILED");
    expect(error.message).toBe("model overloaded, try later");
    expect(error.details).toEqual({ exitCode: 3, signal: null, stderr: "model overloaded, try later\n", stderrTruncated: false });
  });

  it("marks the conversation lost when the session to resume does not exist", async () => {
    const { outcome } = await turn({ prompt: "hello", providerSessionId: "ses_00000000000000000000000000" });
    const error = errorOf(outcome);
    expect(error.code).toBe("PROVIDER_FAILED");
    expect(error.message).toBe("Error: Session not found");
    expect(outcome).toMatchObject({ ok: false, conversationLost: true });
  });

  it("fails with PROVIDER_OUTPUT_INVALID when the CLI prints garbage and never finishes the turn", async () => {
    const { outcome, events } = await turn({ prompt: "garbage" });
    const error = errorOf(outcome);
    expect(error.code).toBe("PROVIDER_OUTPUT_INVALID");
    expect(error.message).toBe("opencode ended without finishing the turn");
    expect(error.details).toMatchObject({ ignoredLineCount: 3 });
    expect(events.filter((event) => event.type === "output-seen")).toHaveLength(3);
  });

  it("fails with PROVIDER_NOT_AUTHENTICATED when the model provider has no key", async () => {
    const { outcome, events } = await turn({ prompt: "not-logged-in" });
    const error = errorOf(outcome);
    expect(error.code).toBe("PROVIDER_NOT_AUTHENTICATED");
    expect(error.message).toContain("Anthropic API key is missing");
    expect(error.message).toContain('run "opencode auth login"');
    expect(events.some((event) => event.type === "message-completed")).toBe(false);
  });

  async function hangThenAbort(reason?: unknown) {
    const controller = new AbortController();
    const adapter = createOpencodeAdapter({ killGraceMs: 500 });
    const startedAt = Date.now();
    let pid = 0;
    const outcome = await adapter.runTurn(
      turnRequest({ effortArgv: [], signal: controller.signal, prompt: "hang", onProcessStarted: (started) => (pid = started) }),
      (event) => {
        if (event.type === "provider-session-started") controller.abort(reason);
      },
    );
    return { outcome, elapsedMs: Date.now() - startedAt, pid };
  }

  it("kills a hanging CLI's process group on cancel and settles with TURN_CANCELLED", async () => {
    const { outcome, elapsedMs, pid } = await hangThenAbort();
    expect(errorOf(outcome)).toMatchObject({ code: "TURN_CANCELLED" });
    expect(elapsedMs).toBeLessThan(5_000);
    expect(pid).toBeGreaterThan(0);
    expect(() => process.kill(-pid, 0)).toThrow(/ESRCH/);
  });

  it("settles a cancelled turn with the abort reason when it is a PedelecError", async () => {
    const { outcome } = await hangThenAbort(new PedelecError("SESSION_ENDED", "the session ended"));
    expect(errorOf(outcome)).toMatchObject({ code: "SESSION_ENDED", message: "the session ended" });
  });

  it("fails with INVALID_INPUT, without starting anything, for a model that looks like a flag", async () => {
    const { outcome, events } = await turn({ prompt: "hello", model: "--dir=/" });
    expect(errorOf(outcome).code).toBe("INVALID_INPUT");
    expect(events).toEqual([]);
  });
});
