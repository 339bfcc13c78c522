import { mkdir, readFile, readdir, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import type { Activity } from "@pedelec/protocol/session-events";
import type { ProviderEvent } from "../provider-adapter.js";
import { errorOf, firstPrompt, sessionIdOf, texts } from "../../testing/provider-turns.js";
import { useStandInAdapter } from "../../testing/stand-in-adapter.js";
import { discoverStandIn } from "../../testing/stand-in-discovery.js";
import { createCodexAdapter } from "./codex-adapter.js";
import { CODEX_NO_SHELL_FLAGS, CODEX_SANDBOX_FLAGS, CODEX_SHELL_FLAGS, codexMcpFlags } from "./codex-args.js";
import { replayingThenWaitingCli } from "../../testing/replaying-cli.js";

const STAND_IN_DIRECTORY = fileURLToPath(new URL("../../../../../test/stand-ins/codex/", import.meta.url));
const STAND_IN = path.join(STAND_IN_DIRECTORY, "codex");
/** Answers as the session's MCP server does, from a fixed table (test/stand-ins/pedelec-mcp). */
const MCP_STAND_IN = fileURLToPath(new URL("../../../../../test/stand-ins/pedelec-mcp/pedelec-mcp.mjs", import.meta.url));
const TOOL_SERVER = { command: process.execPath, args: [MCP_STAND_IN], envNames: ["PEDELEC_TEST_ARGV_FILE"] };

const standIn = useStandInAdapter({
  prefix: "pedelec-codex-",
  stateFolders: { CODEX_HOME: "codex-state" },
  executablePath: STAND_IN,
  effortArgv: ["-c", "model_reasoning_effort=medium"],
  createAdapter: () => createCodexAdapter({ killGraceMs: 500 }),
  toolServer: TOOL_SERVER,
});
const { turn, request: turnRequest } = standIn;

function activities(events: ProviderEvent[]): Activity[] {
  return events.flatMap((event) => (event.type === "activity" ? [event.activity] : []));
}

describe("codex adapter with the stand-in CLI", () => {
  it("discovers the stand-in through PEDELEC_PROVIDER_PATH", async () => {
    const discovery = await discoverStandIn(createCodexAdapter(), STAND_IN_DIRECTORY, standIn.env.HOME);
    expect(discovery).toEqual({ available: true, executablePath: STAND_IN, version: "0.171.0", error: null });
  });

  it("answers with completed messages only, then resumes the same thread on the next turn", async () => {
    const first = await turn({ prompt: firstPrompt("reply: Hello from the stand-in.") });
    expect(first.outcome).toEqual({ ok: true });
    const threadId = sessionIdOf(first.events);
    expect(threadId).toMatch(/^[0-9a-f-]{36}$/);
    expect(texts(first.events)).toEqual(["Hello from the stand-in."]);
    expect(first.events.some((event) => event.type === "text-delta")).toBe(false);
    expect(createCodexAdapter().capabilities).toEqual({ textDeltas: false, resume: true });

    const second = await turn({ prompt: "report-resume", providerSessionId: threadId });
    expect(second.outcome).toEqual({ ok: true });
    expect(sessionIdOf(second.events)).toBe(threadId);
    expect(texts(second.events)).toEqual([`resumed=${threadId}`]);
    // Item ids restart in every codex run; the adapter's ids do not collide across turns.
    const firstId = first.events.find((event) => event.type === "message-completed");
    const secondId = second.events.find((event) => event.type === "message-completed");
    expect(firstId).not.toMatchObject({ messageId: (secondId as { messageId: string }).messageId });
  });

  it("passes sandbox flags, model and effort to the CLI, and bypass flags only with Full Access", async () => {
    const sandboxed = await turn({ prompt: "report-args", model: "gpt-5-codex", effortArgv: ["-c", "model_reasoning_effort=high"] });
    expect(JSON.parse(texts(sandboxed.events)[0] ?? "null")).toEqual([
      "exec",
      "--json",
      "--skip-git-repo-check",
      "--cd",
      standIn.workspace,
      // The flags' values are pinned in codex-args.test.ts; this checks they reach the CLI, in this order.
      ...CODEX_SANDBOX_FLAGS,
      ...CODEX_NO_SHELL_FLAGS,
      ...CODEX_SHELL_FLAGS,
      ...codexMcpFlags(TOOL_SERVER),
      "-m",
      "gpt-5-codex",
      "-c",
      "model_reasoning_effort=high",
      "-",
    ]);
    const full = await turn({ prompt: "report-args", access: "full", effortArgv: [] });
    expect(JSON.parse(texts(full.events)[0] ?? "null")).toEqual([
      "exec",
      "--json",
      "--skip-git-repo-check",
      "--cd",
      standIn.workspace,
      "--dangerously-bypass-approvals-and-sandbox",
      "-c",
      "allow_login_shell=false",
      ...codexMcpFlags(TOOL_SERVER),
      "-",
    ]);
  });

  it("switches the user's own MCP servers off for a sandbox turn only, as codex lists them", async () => {
    const config = path.join(standIn.env.CODEX_HOME ?? "", "config.toml");
    await mkdir(path.dirname(config), { recursive: true });
    await writeFile(
      config,
      '[mcp_servers.github]\ncommand = "gh-mcp"\n[mcp_servers."dotted.name"]\ncommand = "x"\n[mcp_servers.parked]\nenabled = false\n',
    );
    try {
      const sandboxed = JSON.parse(texts((await turn({ prompt: "report-args" })).events)[0] ?? "null") as string[];
      expect(sandboxed).toContain('mcp_servers={"dotted.name"={enabled=false},"github"={enabled=false}}');
      const full = JSON.parse(texts((await turn({ prompt: "report-args", access: "full" })).events)[0] ?? "null") as string[];
      expect(full.filter((argument) => argument.startsWith("mcp_servers={"))).toEqual([]);
    } finally {
      await rm(config, { force: true });
    }
  });

  it("gives a sandboxed agent no command tool at all, Pedelec's own commands included; Full Access runs anything", async () => {
    for (const command of ["cat /etc/hostname", "pedelec-cli tool-spec add_todo"]) {
      const sandboxed = await turn({ prompt: `bash: ${command}` });
      expect(sandboxed.outcome).toEqual({ ok: true });
      expect(texts(sandboxed.events)).toEqual(["Bash denied: unsupported call: exec_command"]);
      expect(activities(sandboxed.events)).toEqual([]);
    }
    const full = await turn({ prompt: "bash: echo hello from the host", access: "full" });
    expect(texts(full.events)).toEqual(["Bash exit 0: hello from the host"]);
  });

  it("calls a page tool through the session's MCP server in a resumed turn and reports it as a tool activity", async () => {
    const first = await turn({ prompt: firstPrompt("reply: ready") });
    const { outcome, events } = await turn({ prompt: `call-tool add_card {"title":"Buy milk"}`, providerSessionId: sessionIdOf(first.events) });
    expect(outcome).toEqual({ ok: true });
    // The server got the one variable its env_vars names (the stand-in records the call there).
    expect(await standIn.pedelecCliArgv()).toEqual(["mcp-call", "add_card", '{"title":"Buy milk"}']);
    const [started, completed] = activities(events);
    expect(started).toMatchObject({ kind: "tool", status: "started", title: "pedelec.add_card" });
    expect(completed).toMatchObject({ id: started?.id, kind: "tool", status: "completed", title: "pedelec.add_card" });
    expect(texts(events)).toEqual(['Tool add_card returned: {"id":"card-4","title":"Buy milk"}']);
  });

  it("reports a failing tool call as a failed activity and lets the agent answer", async () => {
    const { outcome, events } = await turn({ prompt: firstPrompt("call-tool broken {}") });
    expect(outcome).toEqual({ ok: true });
    expect(activities(events).map((activity) => activity.status)).toEqual(["started", "failed"]);
    expect(texts(events)).toEqual(['Tool broken failed: {"error":{"code":"TOOL_HANDLER_ERROR","message":"handler threw"}}']);
  });

  it("reports a file edit as a file-edit activity", async () => {
    const { outcome, events } = await turn({ prompt: "edit-file notes.md Buy milk" });
    expect(outcome).toEqual({ ok: true });
    const target = path.join(standIn.workspace, "notes.md");
    expect(activities(events)).toEqual([{ id: expect.any(String), kind: "file-edit", status: "completed", title: target, detail: `add: ${target}` }]);
    expect(await readFile(target, "utf8")).toBe("Buy milk");
  });

  it("fails with PROVIDER_FAILED and the stderr when the CLI exits non-zero", async () => {
    const error = errorOf((await turn({ prompt: "exit-with 3 model overloaded, try later" })).outcome);
    expect(error.code).toBe("PROVIDER_FAILED");
    expect(error.message).toBe("model overloaded, try later");
    expect(error.details).toMatchObject({ exitCode: 3, signal: null });
  });

  it("flags a resume of a thread codex has no rollout of as a lost conversation", async () => {
    const unknown = "00000000-0000-4000-8000-000000000000";
    const { outcome } = await turn({ prompt: "hello", providerSessionId: unknown });
    expect(errorOf(outcome)).toMatchObject({
      code: "PROVIDER_FAILED",
      message: `Error: thread/resume: thread/resume failed: no rollout found for thread id ${unknown} (code -32600)`,
    });
    expect(outcome).toMatchObject({ ok: false, conversationLost: true });
  });

  it("passes the effort profile to the CLI (an unknown level makes it fail)", async () => {
    const { outcome } = await turn({ prompt: "hello", effortArgv: ["-c", "model_reasoning_effort=turbo"] });
    expect(errorOf(outcome).message).toMatch(/model_reasoning_effort/);
  });

  it("fails with PROVIDER_OUTPUT_INVALID when the CLI prints garbage and no turn end", async () => {
    const { outcome, events } = await turn({ prompt: "garbage" });
    const error = errorOf(outcome);
    expect(error).toMatchObject({ code: "PROVIDER_OUTPUT_INVALID", message: "codex ended without turn.completed or turn.failed" });
    expect(error.details).toMatchObject({ ignoredLineCount: 3 });
    expect(events.filter((event) => event.type === "output-seen")).toHaveLength(3);
  });

  it("fails with PROVIDER_NOT_AUTHENTICATED, naming codex login, on a signed-out run", async () => {
    const { outcome, events } = await turn({ prompt: "not-logged-in" });
    const error = errorOf(outcome);
    expect(error.code).toBe("PROVIDER_NOT_AUTHENTICATED");
    expect(error.message).toMatch(/401 Unauthorized.*run "codex login" in a terminal, or fix the API key of its model provider$/);
    expect(texts(events)).toEqual([]);
  });

  it("kills the CLI's whole process group on cancel and settles with TURN_CANCELLED", async () => {
    const controller = new AbortController();
    const adapter = createCodexAdapter({ killGraceMs: 500 });
    const startedAt = Date.now();
    const marker = path.join(standIn.workspace, ".stand-in-hanging");
    const outcome = await adapter.runTurn(turnRequest({ signal: controller.signal, prompt: "hang" }), (event) => {
      if (event.type !== "provider-session-started") return;
      const poll = setInterval(() => {
        void readFile(marker, "utf8").then(
          () => {
            clearInterval(poll);
            controller.abort();
          },
          () => undefined,
        );
      }, 10);
    });
    expect(errorOf(outcome)).toMatchObject({ code: "TURN_CANCELLED" });
    expect(Date.now() - startedAt).toBeLessThan(5_000);
    const pid = Number(await readFile(marker, "utf8"));
    expect(() => process.kill(-pid, 0)).toThrowError(expect.objectContaining({ code: "ESRCH" }) as Error);
  });

  it("settles a cancelled turn with the abort reason when it is a PedelecError", async () => {
    const controller = new AbortController();
    const outcome = await createCodexAdapter({ killGraceMs: 500 }).runTurn(turnRequest({ signal: controller.signal, prompt: "hang" }), (event) => {
      if (event.type === "provider-session-started") controller.abort(new PedelecError("SESSION_ENDED", "the session ended"));
    });
    expect(errorOf(outcome)).toMatchObject({ code: "SESSION_ENDED", message: "the session ended" });
  });

  it("keeps each thread in a rollout file under CODEX_HOME", async () => {
    const { events } = await turn({ prompt: firstPrompt("reply: saved") });
    const threadId = sessionIdOf(events);
    const day = new Date().toISOString().slice(0, 10).split("-");
    const files = await readdir(path.join(standIn.env.CODEX_HOME ?? "", "sessions", ...day));
    expect(files.some((file) => file.endsWith(`-${threadId}.jsonl`))).toBe(true);
  });

  it("fails with PROVIDER_UNAVAILABLE when the executable is gone", async () => {
    const { outcome } = await turn({ prompt: "hello", executablePath: path.join(standIn.root, "missing", "codex") });
    expect(errorOf(outcome)).toMatchObject({ code: "PROVIDER_UNAVAILABLE", message: expect.stringMatching(/^codex could not be started: .*ENOENT/) });
  });

  it("fails with INVALID_INPUT, without starting anything, for a model that looks like a flag", async () => {
    const { outcome, events } = await turn({ prompt: "hello", model: "--yolo" });
    expect(errorOf(outcome).code).toBe("INVALID_INPUT");
    expect(events).toEqual([]);
  });
});

describe("codex adapter on a refused key", () => {
  /**
   * A `codex` that prints the first 3 lines of a recorded run on a refused key (its first retry of the 401), then
   * waits as the real one does between its retries.
   */
  const refusingCli = () => replayingThenWaitingCli(standIn.root, "refusing-codex", new URL("./fixtures/refused-key.jsonl", import.meta.url), 3);

  it("stops the CLI at its first retry and fails the turn with PROVIDER_NOT_AUTHENTICATED", async () => {
    const startedAt = Date.now();
    // Full Access: a sandbox turn would first ask this replay for `codex mcp list`, which it does not answer.
    const { outcome, events } = await turn({ prompt: "hello", executablePath: await refusingCli(), access: "full" });
    expect(Date.now() - startedAt).toBeLessThan(5_000);
    const error = errorOf(outcome);
    expect(error.code).toBe("PROVIDER_NOT_AUTHENTICATED");
    expect(error.message).toMatch(/refused its credentials .*; run "codex login"|refused its credentials .*; run "codex auth login"/);
    expect(error.message).not.toMatch(/127\.0\.0\.1/);
    expect(events.some((event) => event.type === "provider-session-started")).toBe(true);
  });
});
