import { readFile, readdir } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { errorOf, firstPrompt, messages, sessionIdOf, THREAD_ID } from "../../testing/provider-turns.js";
import { useStandInAdapter } from "../../testing/stand-in-adapter.js";
import { discoverStandIn } from "../../testing/stand-in-discovery.js";
import { createAntigravityAdapter } from "./antigravity-adapter.js";

const STAND_IN_DIRECTORY = fileURLToPath(new URL("../../../../../test/stand-ins/antigravity/", import.meta.url));
const STAND_IN = path.join(STAND_IN_DIRECTORY, "agy");

const standIn = useStandInAdapter({
  prefix: "pedelec-agy-",
  executablePath: STAND_IN,
  effortArgv: ["--model", "gemini-3.6-flash-medium"],
  createAdapter: () => createAntigravityAdapter({ killGraceMs: 500 }),
});
const { turn, request: turnRequest } = standIn;

describe("antigravity adapter with the stand-in CLI", () => {
  it("discovers the stand-in through PEDELEC_PROVIDER_PATH", async () => {
    const discovery = await discoverStandIn(createAntigravityAdapter(), STAND_IN_DIRECTORY, standIn.env.HOME);
    expect(discovery).toEqual({ available: true, executablePath: STAND_IN, version: "1.1.17", error: null });
  });

  it("streams a reply, then resumes the same conversation on the next turn", async () => {
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
    const stored = await readFile(path.join(standIn.env.HOME ?? "", ".gemini", "antigravity-cli", "conversations", `${sessionId}.jsonl`), "utf8");
    expect(stored).toContain("report-resume");
  });

  it("passes a multi-line first prompt as one argv element, and nothing on stdin", async () => {
    const { outcome, events } = await turn({ prompt: firstPrompt("report-args") });
    expect(outcome).toEqual({ ok: true });
    const argv = JSON.parse(messages(events)[0]?.text ?? "[]") as string[];
    expect(argv[0]).toBe("-p");
    expect(argv[1]).toBe(firstPrompt("report-args"));
    expect(argv.slice(2)).toEqual([
      "--output-format",
      "stream-json",
      "--mode",
      "accept-edits",
      "--dangerously-skip-permissions",
      "--model",
      "gemini-3.6-flash-medium",
    ]);
  });

  it("gives sandbox and Full Access sessions the same permission flags (agy has no restricted headless mode)", async () => {
    const argvOf = async (access: "sandbox" | "full") => {
      const { events } = await turn({ prompt: "report-args", access, model: "claude-sonnet-4-6" });
      return JSON.parse(messages(events)[0]?.text ?? "[]") as string[];
    };
    const sandbox = await argvOf("sandbox");
    expect(sandbox).toEqual([
      "-p",
      "report-args",
      "--output-format",
      "stream-json",
      "--mode",
      "accept-edits",
      "--dangerously-skip-permissions",
      "--model",
      "claude-sonnet-4-6",
    ]);
    expect(await argvOf("full")).toEqual(sandbox);
    const ran = await turn({ prompt: "bash: echo hello from the host" });
    expect(messages(ran.events).at(-1)?.text).toBe("Bash exit 0: hello from the host");
  });

  it("runs a tool call through pedelec-cli and reports it as a command activity", async () => {
    const first = await turn({ prompt: firstPrompt("reply: ready") });
    const sessionId = sessionIdOf(first.events) ?? null;
    const { outcome, events } = await turn({ prompt: `call-tool add_card {"title":"Buy milk"}`, providerSessionId: sessionId });
    expect(outcome).toEqual({ ok: true });
    const argv = await standIn.pedelecCliArgv();
    expect(argv).toEqual(["--thread-id", THREAD_ID, "tool-call", "add_card", '{"title":"Buy milk"}']);

    const command = `pedelec-cli --thread-id ${THREAD_ID} tool-call add_card '{"title":"Buy milk"}'`;
    const activities = events.flatMap((event) => (event.type === "activity" ? [event.activity] : []));
    expect(activities).toEqual([
      { id: expect.stringMatching(/-step-2$/), kind: "command", status: "started", title: command },
      { id: activities[0]?.id, kind: "command", status: "completed", title: command, detail: '{"id":"card-4","title":"Buy milk"}\n' },
    ]);
    expect(messages(events).map((message) => message.text)).toEqual([
      "Calling the page tool add_card.",
      'Tool add_card returned: {"id":"card-4","title":"Buy milk"}',
    ]);
  });

  it("reports a failing tool call as a failed activity and lets the agent answer", async () => {
    const { outcome, events } = await turn({ prompt: firstPrompt("call-tool broken {}") });
    expect(outcome).toEqual({ ok: true });
    const activities = events.flatMap((event) => (event.type === "activity" ? [event.activity] : []));
    expect(activities.map((activity) => activity.status)).toEqual(["started", "failed"]);
    expect(messages(events).at(-1)?.text).toBe('Tool broken failed: {"error":{"code":"TOOL_HANDLER_ERROR","message":"handler threw"}}');
  });

  it("reads a tool spec through pedelec-cli", async () => {
    const { outcome, events } = await turn({ prompt: firstPrompt("tool-spec add_card_spec") });
    expect(outcome).toEqual({ ok: true });
    expect(messages(events).at(-1)?.text).toBe('Spec: {"type":"object"}');
  });

  it("fails with PROVIDER_FAILED and the stderr when the CLI exits non-zero", async () => {
    const { outcome } = await turn({ prompt: "exit-with 3 model overloaded, try later" });
    const error = errorOf(outcome);
    expect(error.code).toBe("PROVIDER_FAILED");
    expect(error.message).toBe("model overloaded, try later");
    expect(error.details).toEqual({ exitCode: 3, signal: null, stderr: "model overloaded, try later\n", stderrTruncated: false });
  });

  it("marks the conversation lost when resuming one the CLI does not know", async () => {
    const { outcome } = await turn({ prompt: "hello", providerSessionId: "00000000-0000-4000-8000-000000000000" });
    expect(errorOf(outcome)).toMatchObject({
      code: "PROVIDER_FAILED",
      message: 'Error: conversation "00000000-0000-4000-8000-000000000000" not found',
    });
    expect(outcome).toMatchObject({ ok: false, conversationLost: true });
  });

  it("fails with PROVIDER_OUTPUT_INVALID when the CLI prints garbage and no result", async () => {
    const { outcome, events } = await turn({ prompt: "garbage" });
    const error = errorOf(outcome);
    expect(error).toMatchObject({ code: "PROVIDER_OUTPUT_INVALID", message: "agy ended without a result", details: { ignoredLineCount: 3 } });
    expect(events.filter((event) => event.type === "output-seen")).toHaveLength(3);
  });

  it("fails with PROVIDER_NOT_AUTHENTICATED, naming the fix, on the signed-out run", async () => {
    const { outcome, events } = await turn({ prompt: "not-logged-in" });
    expect(errorOf(outcome)).toMatchObject({
      code: "PROVIDER_NOT_AUTHENTICATED",
      message: 'agy is not signed in (authentication required); run "agy" in a terminal once to sign in',
    });
    expect(events).toEqual([]);
  });

  async function hangThenAbort(reason?: unknown) {
    const controller = new AbortController();
    const adapter = createAntigravityAdapter({ killGraceMs: 500 });
    const pids: number[] = [];
    const startedAt = Date.now();
    const running = adapter.runTurn(turnRequest({ signal: controller.signal, prompt: "hang", onProcessStarted: (pid) => pids.push(pid) }), () => {});
    // The stand-in marks the workspace with its pid once it is hanging.
    const marker = path.join(standIn.workspace, ".stand-in-hanging");
    const deadline = Date.now() + 10_000;
    while ((await readFile(marker, "utf8").catch(() => "")) === "") {
      if (Date.now() > deadline) throw new Error("the stand-in never started hanging");
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    controller.abort(reason);
    const outcome = await running;
    return { outcome, elapsedMs: Date.now() - startedAt, pids };
  }

  it("kills a hanging CLI's process group on cancel and settles with TURN_CANCELLED", async () => {
    const { outcome, elapsedMs, pids } = await hangThenAbort();
    expect(errorOf(outcome)).toMatchObject({ code: "TURN_CANCELLED" });
    expect(elapsedMs).toBeLessThan(5_000);
    expect(pids).toHaveLength(1);
    expect(Number(await readFile(path.join(standIn.workspace, ".stand-in-hanging"), "utf8"))).toBe(pids[0]);
    expect(() => process.kill(-(pids[0] ?? 0), 0)).toThrow(expect.objectContaining({ code: "ESRCH" }));
  });

  it("settles a cancelled turn with the abort reason when it is a PedelecError", async () => {
    const { outcome } = await hangThenAbort(new PedelecError("SESSION_ENDED", "the session ended"));
    expect(errorOf(outcome)).toMatchObject({ code: "SESSION_ENDED" });
  });

  it("fails with INVALID_INPUT, without starting anything, for a model that looks like a flag", async () => {
    const { outcome, events } = await turn({ prompt: "hello", model: "--sandbox" });
    expect(errorOf(outcome).code).toBe("INVALID_INPUT");
    expect(events).toEqual([]);
    expect(await readdir(standIn.workspace)).toEqual([]);
  });
});
