import { readFile, readdir } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { errorOf, firstPrompt, messages, sessionIdOf } from "../../testing/provider-turns.js";
import { useStandInAdapter } from "../../testing/stand-in-adapter.js";
import { discoverStandIn } from "../../testing/stand-in-discovery.js";
import { createClaudeAdapter } from "./claude-adapter.js";
import { replayingThenWaitingCli } from "../../testing/replaying-cli.js";

const STAND_IN_DIRECTORY = fileURLToPath(new URL("../../../../../test/stand-ins/claude/", import.meta.url));
const STAND_IN = path.join(STAND_IN_DIRECTORY, "claude");
/** Answers as the session's MCP server does, from a fixed table (test/stand-ins/pedelec-mcp). */
const MCP_STAND_IN = fileURLToPath(new URL("../../../../../test/stand-ins/pedelec-mcp/pedelec-mcp.mjs", import.meta.url));

const standIn = useStandInAdapter({
  prefix: "pedelec-claude-",
  stateFolders: { CLAUDE_CONFIG_DIR: "claude-state" },
  toolSpecAnswer: '{"type":"object","properties":{"title":{"type":"string"}}}',
  executablePath: STAND_IN,
  effortArgv: ["--effort", "medium"],
  createAdapter: () => createClaudeAdapter({ killGraceMs: 500 }),
  toolServer: { command: process.execPath, args: [MCP_STAND_IN], envNames: [] },
});
const { turn, request: turnRequest } = standIn;

describe("access modes", () => {
  it("gives a sandboxed agent no shell at all, Pedelec's own commands included, and lets a Full Access agent run one", async () => {
    const sandboxed = await turn({ prompt: "bash: cat /etc/hostname" });
    expect(sandboxed.outcome).toEqual({ ok: true });
    expect(messages(sandboxed.events).at(-1)?.text).toMatch(/^Bash denied: .*No such tool available: Bash/);
    const own = await turn({ prompt: "bash: pedelec-cli tool-spec add_todo" });
    expect(messages(own.events).at(-1)?.text).toMatch(/^Bash denied: .*No such tool available: Bash/);

    const full = await turn({ prompt: "bash: echo hello from the host", access: "full" });
    expect(messages(full.events).at(-1)?.text).toBe("Bash exit 0: hello from the host");
  });
});

describe("claude adapter with the stand-in CLI", () => {
  it("discovers the stand-in through PEDELEC_PROVIDER_PATH", async () => {
    const discovery = await discoverStandIn(createClaudeAdapter(), STAND_IN_DIRECTORY, standIn.env.HOME);
    expect(discovery).toEqual({ available: true, executablePath: STAND_IN, version: "2.1.332", error: null });
  });

  it("streams a reply, then resumes the same conversation on the next turn", async () => {
    const first = await turn({ prompt: firstPrompt("reply: Hello from the stand-in, streamed.") });
    expect(first.outcome).toEqual({ ok: true });
    const sessionId = sessionIdOf(first.events);
    expect(sessionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(messages(first.events)).toEqual([{ text: "Hello from the stand-in, streamed.", deltas: "Hello from the stand-in, streamed." }]);
    expect(first.events.filter((event) => event.type === "text-delta").length).toBeGreaterThan(3);
    expect(first.events.filter((event) => event.type === "output-seen").length).toBeGreaterThan(10);

    const second = await turn({ prompt: "report-resume", providerSessionId: sessionId ?? null });
    expect(second.outcome).toEqual({ ok: true });
    expect(sessionIdOf(second.events)).toBe(sessionId);
    expect(messages(second.events).map((message) => message.text)).toEqual([`resumed=${sessionId}`]);

    const folder = path.join(standIn.env.CLAUDE_CONFIG_DIR ?? "", "projects");
    const [project] = await readdir(folder);
    const conversation = await readFile(path.join(folder, project ?? "", `${sessionId}.jsonl`), "utf8");
    expect(conversation).toContain("report-resume");
  });

  it("calls a page tool through the session's MCP server and reports it as a tool activity", async () => {
    const first = await turn({ prompt: firstPrompt("reply: ready") });
    const sessionId = sessionIdOf(first.events) ?? null;

    // The resumed turn carries only the user message; the server needs no thread id from the prompt.
    const { outcome, events } = await turn({
      prompt: `call-tool add_card {"title":"Buy milk"}`,
      providerSessionId: sessionId,
    });
    expect(outcome).toEqual({ ok: true });
    expect(await standIn.pedelecCliArgv()).toEqual(["mcp-call", "add_card", '{"title":"Buy milk"}']);

    const activities = events.flatMap((event) => (event.type === "activity" ? [event.activity] : []));
    expect(activities.map(({ kind, status, title }) => ({ kind, status, title }))).toEqual([
      { kind: "tool", status: "started", title: "mcp__pedelec__add_card" },
      { kind: "tool", status: "completed", title: "mcp__pedelec__add_card" },
    ]);
    expect(activities[1]?.id).toBe(activities[0]?.id);
    expect(messages(events)).toEqual([
      {
        text: 'Tool add_card returned: {"id":"card-4","title":"Buy milk"}',
        deltas: 'Tool add_card returned: {"id":"card-4","title":"Buy milk"}',
      },
    ]);
  });

  it("reports a failing tool call as a failed activity and lets the agent answer", async () => {
    const { outcome, events } = await turn({ prompt: firstPrompt("call-tool broken {}") });
    expect(outcome).toEqual({ ok: true });
    const activities = events.flatMap((event) => (event.type === "activity" ? [event.activity] : []));
    expect(activities.map((activity) => activity.status)).toEqual(["started", "failed"]);
    expect(messages(events)[0]?.text).toBe('Tool broken failed: {"error":{"code":"TOOL_HANDLER_ERROR","message":"handler threw"}}');
  });

  it("reads a tool's schema from the session's MCP server", async () => {
    const { outcome, events } = await turn({ prompt: firstPrompt("tool-spec add_card_spec") });
    expect(outcome).toEqual({ ok: true });
    expect(messages(events)[0]?.text).toBe('Spec: {"type":"object"}');
  });

  it("fails with PROVIDER_FAILED and the stderr when the CLI exits non-zero", async () => {
    const { outcome } = await turn({ prompt: "exit-with 3 model overloaded, try later" });
    const error = errorOf(outcome);
    expect(error.code).toBe("PROVIDER_FAILED");
    expect(error.message).toBe("model overloaded, try later");
    expect(error.details).toEqual({ exitCode: 3, signal: null, stderr: "model overloaded, try later\n", stderrTruncated: false });
  });

  it("fails with PROVIDER_FAILED when resuming a conversation the CLI does not know", async () => {
    const { outcome } = await turn({ prompt: "hello", providerSessionId: "00000000-0000-4000-8000-000000000000" });
    const error = errorOf(outcome);
    expect(error.code).toBe("PROVIDER_FAILED");
    expect(error.message).toBe("No conversation found with session ID: 00000000-0000-4000-8000-000000000000");
    // Core starts a fresh conversation on this, instead of failing every later turn the same way.
    expect(outcome).toMatchObject({ ok: false, conversationLost: true });
  });

  it("passes the effort profile to the CLI (an unknown level makes it fail)", async () => {
    const { outcome } = await turn({ prompt: "hello", effortArgv: ["--effort", "turbo"] });
    expect(errorOf(outcome).message).toMatch(/--effort/);
  });

  it("fails with PROVIDER_OUTPUT_INVALID when the CLI prints garbage and no result", async () => {
    const { outcome, events } = await turn({ prompt: "garbage" });
    const error = errorOf(outcome);
    expect(error.code).toBe("PROVIDER_OUTPUT_INVALID");
    expect(error.message).toBe("claude ended without a result");
    expect(error.details).toMatchObject({ ignoredLineCount: 3 });
    expect(events.filter((event) => event.type === "output-seen")).toHaveLength(3);
  });

  it("fails with PROVIDER_NOT_AUTHENTICATED on the signed-out reply", async () => {
    const { outcome, events } = await turn({ prompt: "not-logged-in" });
    const error = errorOf(outcome);
    expect(error.code).toBe("PROVIDER_NOT_AUTHENTICATED");
    expect(error.message).toContain("Not logged in");
    expect(events.some((event) => event.type === "text-delta" || event.type === "message-completed")).toBe(false);
  });

  /** Starts a hanging turn and aborts it as soon as the CLI's init line arrived. */
  async function hangThenAbort(reason?: unknown) {
    const controller = new AbortController();
    const adapter = createClaudeAdapter({ killGraceMs: 500 });
    const startedAt = Date.now();
    const outcome = await adapter.runTurn(turnRequest({ effortArgv: [], signal: controller.signal, prompt: "hang" }), (event) => {
      if (event.type === "provider-session-started") controller.abort(reason);
    });
    return { outcome, elapsedMs: Date.now() - startedAt };
  }

  it("kills a hanging CLI on cancel and settles with TURN_CANCELLED", async () => {
    const { outcome, elapsedMs } = await hangThenAbort();
    expect(errorOf(outcome)).toMatchObject({ code: "TURN_CANCELLED" });
    expect(elapsedMs).toBeLessThan(5_000);
  });

  it("settles a cancelled turn with the abort reason when it is a PedelecError", async () => {
    const { outcome } = await hangThenAbort(new PedelecError("SESSION_ENDED", "the session ended"));
    expect(errorOf(outcome)).toMatchObject({ code: "SESSION_ENDED", message: "the session ended" });
  });

  it("fails with PROVIDER_UNAVAILABLE when the executable is gone", async () => {
    const { outcome } = await turn({ prompt: "hello", executablePath: path.join(standIn.root, "missing", "claude") });
    const error = errorOf(outcome);
    expect(error.code).toBe("PROVIDER_UNAVAILABLE");
    expect(error.message).toMatch(/^claude could not be started: .*ENOENT/);
  });

  it("fails with INVALID_INPUT, without starting anything, for a model that looks like a flag", async () => {
    const { outcome, events } = await turn({ prompt: "hello", model: "--add-dir=/" });
    expect(errorOf(outcome).code).toBe("INVALID_INPUT");
    expect(events).toEqual([]);
  });

  it("turns a throwing event listener into a failed turn instead of a crash", async () => {
    const adapter = createClaudeAdapter();
    const outcome = await adapter.runTurn(turnRequest({ effortArgv: [], prompt: "reply: hi" }), () => {
      throw new Error("listener broke");
    });
    expect(errorOf(outcome)).toMatchObject({ code: "PROVIDER_FAILED", message: "a provider event listener failed: listener broke" });
  });
});

describe("claude adapter on a refused key", () => {
  /**
   * A `claude` that prints the first 2 lines of a recorded run on a refused key (its first retry of the 401), then
   * waits as the real one does between its retries.
   */
  const refusingCli = () =>
    replayingThenWaitingCli(standIn.root, "refusing-claude", new URL("./fixtures/refused-key-retry.jsonl", import.meta.url), 2);

  it("stops the CLI at its first retry and fails the turn with PROVIDER_NOT_AUTHENTICATED", async () => {
    const startedAt = Date.now();
    const { outcome, events } = await turn({ prompt: "hello", executablePath: await refusingCli() });
    expect(Date.now() - startedAt).toBeLessThan(5_000);
    const error = errorOf(outcome);
    expect(error.code).toBe("PROVIDER_NOT_AUTHENTICATED");
    expect(error.message).toMatch(/refused its credentials .*; run "claude login"|refused its credentials .*; run "claude auth login"/);
    expect(error.message).not.toMatch(/127\.0\.0\.1/);
    expect(events.some((event) => event.type === "provider-session-started")).toBe(true);
  });
});
