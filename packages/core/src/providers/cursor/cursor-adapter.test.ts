import { readFile, readdir } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import type { ProviderProcessResult } from "../provider-process.js";
import { errorOf, firstPrompt, messages, sessionIdOf, THREAD_ID } from "../../testing/provider-turns.js";
import { useStandInAdapter } from "../../testing/stand-in-adapter.js";
import { discoverStandIn } from "../../testing/stand-in-discovery.js";
import { createCursorAdapter, cursorTurnOutcome } from "./cursor-adapter.js";
import { CursorStreamParser } from "./cursor-stream-parser.js";

const STAND_IN_DIRECTORY = fileURLToPath(new URL("../../../../../test/stand-ins/cursor/", import.meta.url));
const STAND_IN = path.join(STAND_IN_DIRECTORY, "cursor-agent");

const standIn = useStandInAdapter({
  prefix: "pedelec-cursor-",
  stateFolders: { CURSOR_CONFIG_DIR: "cursor-state" },
  executablePath: STAND_IN,
  effortArgv: ["--model", "sonnet-4.5"],
  createAdapter: () => createCursorAdapter({ killGraceMs: 500 }),
});
const { turn, request: turnRequest } = standIn;

describe("cursor adapter with the stand-in CLI", () => {
  it("discovers the stand-in through PEDELEC_PROVIDER_PATH", async () => {
    const discovery = await discoverStandIn(createCursorAdapter(), STAND_IN_DIRECTORY, standIn.env.HOME);
    expect(discovery).toEqual({ available: true, executablePath: STAND_IN, version: "2025.11.25", error: null });
  });

  it("streams a reply without repeats, then resumes the same chat on the next turn", async () => {
    const first = await turn({ prompt: firstPrompt("reply: Hello from the stand-in, streamed.") });
    expect(first.outcome).toEqual({ ok: true });
    const sessionId = sessionIdOf(first.events);
    expect(sessionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(messages(first.events)).toEqual([{ text: "Hello from the stand-in, streamed.", deltas: "Hello from the stand-in, streamed." }]);
    expect(first.events.filter((event) => event.type === "text-delta").length).toBeGreaterThan(3);

    const second = await turn({ prompt: "report-resume", providerSessionId: sessionId ?? null });
    expect(second.outcome).toEqual({ ok: true });
    expect(sessionIdOf(second.events)).toBe(sessionId);
    expect(messages(second.events).map((message) => message.text)).toEqual([`resumed=${sessionId}`]);

    const chats = path.join(standIn.env.CURSOR_CONFIG_DIR ?? "", "chats");
    const [folder] = await readdir(chats);
    expect(await readFile(path.join(chats, folder ?? "", `${sessionId}.jsonl`), "utf8")).toContain("report-resume");
  });

  it("runs a tool call through pedelec-cli and reports it as a command activity", async () => {
    const first = await turn({ prompt: firstPrompt("reply: ready") });
    const { outcome, events } = await turn({
      prompt: `call-tool add_card {"title":"Buy milk"}`,
      providerSessionId: sessionIdOf(first.events) ?? null,
    });
    expect(outcome).toEqual({ ok: true });
    const argv = await standIn.pedelecCliArgv();
    expect(argv).toEqual(["--thread-id", THREAD_ID, "tool-call", "add_card", '{"title":"Buy milk"}']);

    const command = `pedelec-cli --thread-id ${THREAD_ID} tool-call add_card '{"title":"Buy milk"}'`;
    const activities = events.flatMap((event) => (event.type === "activity" ? [event.activity] : []));
    expect(activities).toEqual([
      { id: expect.stringMatching(/^call_/), kind: "command", status: "started", title: command },
      { id: activities[0]?.id, kind: "command", status: "completed", title: command, detail: '{"id":"card-4","title":"Buy milk"}\n' },
    ]);
    expect(messages(events)).toEqual([
      { text: "Calling add_card.", deltas: "Calling add_card." },
      { text: 'Tool add_card returned: {"id":"card-4","title":"Buy milk"}', deltas: 'Tool add_card returned: {"id":"card-4","title":"Buy milk"}' },
    ]);
  });

  it("reports a failing tool call as a failed activity", async () => {
    const { outcome, events } = await turn({ prompt: firstPrompt("call-tool broken {}") });
    expect(outcome).toEqual({ ok: true });
    const activities = events.flatMap((event) => (event.type === "activity" ? [event.activity] : []));
    expect(activities.map((activity) => activity.status)).toEqual(["started", "failed"]);
  });

  it("keeps a sandboxed agent to Pedelec's commands, and lets a Full Access agent run others", async () => {
    const sandboxed = await turn({ prompt: "bash: cat /etc/hostname" });
    expect(sandboxed.outcome).toEqual({ ok: true });
    expect(messages(sandboxed.events).at(-1)?.text).toBe("Shell rejected: Command blocked by sandbox: cat /etc/hostname");
    const rejected = sandboxed.events.flatMap((event) => (event.type === "activity" ? [event.activity] : []));
    expect(rejected.at(-1)).toMatchObject({ status: "failed", detail: "Command blocked by sandbox: cat /etc/hostname" });
    const own = await turn({ prompt: "bash: pedelec-cli tool-spec add_todo" });
    expect(messages(own.events).at(-1)?.text).toMatch(/^Shell exit 0: /);

    const full = await turn({ prompt: "bash: echo hello from the host", access: "full" });
    expect(messages(full.events).at(-1)?.text).toBe("Shell exit 0: hello from the host");

    const sandboxArgs = await turn({ prompt: "report-args" });
    expect(JSON.parse(messages(sandboxArgs.events).at(-1)?.text ?? "[]")).toEqual(expect.arrayContaining(["--force", "--sandbox", "enabled"]));
    const fullArgs = await turn({ prompt: "report-args", access: "full" });
    expect(JSON.parse(messages(fullArgs.events).at(-1)?.text ?? "[]")).toEqual(expect.arrayContaining(["--sandbox", "disabled"]));
  });

  it("passes the model: the session's over the effort profile's (an unknown one makes the CLI fail)", async () => {
    const chosen = await turn({ prompt: "report-args", model: "gpt-5", effortArgv: ["--model", "sonnet-4.5-thinking"] });
    const argv = JSON.parse(messages(chosen.events).at(-1)?.text ?? "[]") as string[];
    expect(argv.slice(-2)).toEqual(["--model", "gpt-5"]);
    expect(argv).not.toContain("sonnet-4.5-thinking");
    const unknown = await turn({ prompt: "hello", effortArgv: ["--model", "turbo-9000"] });
    expect(errorOf(unknown.outcome).message).toMatch(/^Cannot use this model: turbo-9000/);
  });

  it("fails with PROVIDER_FAILED and the stderr when the CLI exits non-zero", async () => {
    const { outcome } = await turn({ prompt: "exit-with 3 model overloaded, try later" });
    const error = errorOf(outcome);
    expect(error.code).toBe("PROVIDER_FAILED");
    expect(error.message).toBe("model overloaded, try later");
    expect(error.details).toEqual({ exitCode: 3, signal: null, stderr: "model overloaded, try later\n", stderrTruncated: false });
  });

  it("marks the conversation lost when the CLI does not know the chat it should resume", async () => {
    const { outcome } = await turn({ prompt: "hello", providerSessionId: "00000000-0000-4000-8000-000000000000" });
    expect(errorOf(outcome)).toMatchObject({ code: "PROVIDER_FAILED", message: "Error: Chat 00000000-0000-4000-8000-000000000000 not found." });
    expect(outcome).toMatchObject({ ok: false, conversationLost: true });
  });

  it("fails with PROVIDER_OUTPUT_INVALID when the CLI prints garbage and no result", async () => {
    const { outcome, events } = await turn({ prompt: "garbage" });
    const error = errorOf(outcome);
    expect(error.code).toBe("PROVIDER_OUTPUT_INVALID");
    expect(error.message).toBe("cursor-agent ended without a result");
    expect(error.details).toMatchObject({ ignoredLineCount: 3 });
    expect(events.filter((event) => event.type === "output-seen")).toHaveLength(3);
  });

  it("fails with PROVIDER_NOT_AUTHENTICATED, naming the login command, when signed out", async () => {
    const { outcome, events } = await turn({ prompt: "not-logged-in" });
    const error = errorOf(outcome);
    expect(error.code).toBe("PROVIDER_NOT_AUTHENTICATED");
    expect(error.message).toContain("Not authenticated");
    expect(error.message).toContain('run "cursor-agent login"');
    expect(error.details).toMatchObject({ fixCommand: "cursor-agent login" });
    expect(events).toEqual([]);
  });

  it("kills a hanging CLI's process group on cancel and settles with TURN_CANCELLED", async () => {
    const controller = new AbortController();
    const running = createCursorAdapter({ killGraceMs: 500 }).runTurn(turnRequest({ signal: controller.signal, prompt: "hang" }), () => {});
    const marker = path.join(standIn.workspace, ".stand-in-hanging");
    const deadline = Date.now() + 10_000;
    let pid = 0;
    while (pid === 0) {
      if (Date.now() > deadline) throw new Error("the stand-in never started hanging");
      pid = Number(await readFile(marker, "utf8").catch(() => "0"));
      if (pid === 0) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(() => process.kill(-pid, 0)).not.toThrow();
    const startedAt = Date.now();
    controller.abort();
    expect(errorOf(await running)).toMatchObject({ code: "TURN_CANCELLED" });
    expect(Date.now() - startedAt).toBeLessThan(5_000);
    expect(() => process.kill(-pid, 0)).toThrow();
  });

  it("fails with INVALID_INPUT, without starting anything, for a model that looks like a flag", async () => {
    const { outcome, events } = await turn({ prompt: "hello", model: "--force" });
    expect(errorOf(outcome).code).toBe("INVALID_INPUT");
    expect(events).toEqual([]);
  });
});

describe("cursorTurnOutcome", () => {
  const run = (overrides: Partial<ProviderProcessResult> = {}): ProviderProcessResult => ({
    exitCode: 0,
    signal: null,
    stderr: "",
    stderrTruncated: false,
    spawnError: null,
    droppedLineCount: 0,
    ...overrides,
  });
  const summaryOf = (lines: string[]) => {
    const parser = new CursorStreamParser();
    for (const line of lines) parser.feed(line);
    parser.finish();
    return parser.summary();
  };

  it("maps the signed-out stderr to PROVIDER_NOT_AUTHENTICATED", async () => {
    const stderr = await readFile(new URL("./fixtures/not-logged-in.stderr.txt", import.meta.url), "utf8");
    const outcome = cursorTurnOutcome(run({ exitCode: 1, stderr }), summaryOf([]));
    expect(errorOf(outcome)).toMatchObject({ code: "PROVIDER_NOT_AUTHENTICATED" });
  });

  it("maps an error line to PROVIDER_FAILED with its message", async () => {
    const lines = (await readFile(new URL("./fixtures/error-line.jsonl", import.meta.url), "utf8")).split("\n").filter(Boolean);
    expect(errorOf(cursorTurnOutcome(run(), summaryOf(lines)))).toMatchObject({
      code: "PROVIDER_FAILED",
      message: "Model temporarily unavailable: rate limited",
    });
  });

  it("maps a malformed known line to PROVIDER_OUTPUT_INVALID", () => {
    const outcome = cursorTurnOutcome(run(), summaryOf(['{"type":"assistant","message":{}}']));
    expect(errorOf(outcome)).toMatchObject({ code: "PROVIDER_OUTPUT_INVALID", message: expect.stringContaining('"assistant" line') });
  });

  it("maps an error result to PROVIDER_FAILED", () => {
    const outcome = cursorTurnOutcome(run(), summaryOf(['{"type":"result","subtype":"error","is_error":true,"result":"quota exceeded"}']));
    expect(errorOf(outcome)).toMatchObject({ code: "PROVIDER_FAILED", message: "quota exceeded" });
  });
});
