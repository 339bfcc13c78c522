import { spawn, type ChildProcess } from "node:child_process";
import { access, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CoreConnection } from "@pedelec/core-client/core-client";
import type { SessionEventEnvelope } from "@pedelec/protocol/session-events";
import { startCore, type RunningCore } from "./core-daemon.js";
import { addTodoTool } from "./testing/add-todo-tool.js";
import { createCoreHome } from "./testing/core-home.js";
import { codeOf } from "./testing/error-code.js";
import { processAlive } from "./testing/process-group.js";
import { collectSessionEvents } from "./testing/session-events.js";

const standInDir = resolve(fileURLToPath(new URL("../../../test/stand-ins/claude", import.meta.url)));
/** The agent command, as built into packages/cli (the launcher Pedelec installs runs the same entry). */
const PEDELEC_CLI_ENTRY = resolve(fileURLToPath(new URL("../../cli/bin/pedelec-cli.js", import.meta.url)));
// The built entry, as the native host launches it: a Core that can be killed with SIGKILL.
const CORE_ENTRY = resolve(fileURLToPath(new URL("../dist/core-entry.js", import.meta.url)));
const ORIGIN = "http://127.0.0.1:4000";
const DEADLINE_MS = 15_000;

let home: string;
let env: NodeJS.ProcessEnv;
const cores: RunningCore[] = [];
const children: ChildProcess[] = [];
const connections: CoreConnection[] = [];

beforeEach(async () => {
  ({ home, env } = await createCoreHome({
    prefix: "pedelec-durable-",
    providerPath: standInDir,
    stateFolders: { CLAUDE_CONFIG_DIR: "claude-state" },
    pedelecCliEntry: PEDELEC_CLI_ENTRY,
  }));
});
afterEach(async () => {
  for (const connection of connections.splice(0)) connection.close();
  for (const child of children.splice(0)) child.kill("SIGKILL");
  for (const core of cores.splice(0)) await core.stop();
  await rm(home, { recursive: true, force: true });
});

async function core(): Promise<RunningCore> {
  const running = await startCore(env);
  cores.push(running);
  return running;
}

async function stopCore(running: RunningCore): Promise<void> {
  cores.splice(cores.indexOf(running), 1);
  await running.stop();
}

async function connect(): Promise<CoreConnection> {
  const connection = await CoreConnection.open(join(home, "run", "core.sock"));
  connections.push(connection);
  return connection;
}

/** Every event envelope a connection receives, in arrival order. */
function envelopes(connection: CoreConnection): SessionEventEnvelope[] {
  const seen: SessionEventEnvelope[] = [];
  connection.onFrame((frame) => {
    if (frame.kind === "event") seen.push(frame.envelope);
  });
  return seen;
}

async function waitFor(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + DEADLINE_MS;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what} did not happen within ${DEADLINE_MS} ms`);
    await new Promise((resolvePromise) => setTimeout(resolvePromise, 10));
  }
}

const exists = (path: string): Promise<boolean> =>
  access(path).then(
    () => true,
    () => false,
  );

describe("sessions outlive Core", () => {
  it("resumes after a restart with the same workspace, seq and provider conversation", async () => {
    const first = await core();
    const page = await connect();
    const events = collectSessionEvents(page, DEADLINE_MS);
    const info = await page.request("createSession", { provider: "claude", skills: { guidance: "", tools: [addTodoTool(5_000)] } }, ORIGIN);
    await page.request("sendText", { sessionId: info.sessionId, turnId: "turn-1", text: "reply: remember me" }, ORIGIN);
    await events.until("turn-completed");
    page.close();
    await stopCore(first);
    expect(await exists(info.workspace.path)).toBe(true);

    await core();
    const again = await connect();
    const later = collectSessionEvents(again, DEADLINE_MS);
    const resumed = await again.request("resumeSession", { sessionId: info.sessionId }, ORIGIN);
    expect(resumed).toMatchObject({
      sessionId: info.sessionId,
      status: "idle",
      workspace: info.workspace,
      toolNames: ["add_todo"],
      activeTurn: null,
      pendingToolCalls: [],
    });
    expect(resumed.lastSeq).toBeGreaterThan(4);
    // Another origin still learns nothing.
    expect(await codeOf(again.request("resumeSession", { sessionId: info.sessionId }, "http://127.0.0.1:4001"))).toBe("THREAD_NOT_FOUND");

    await again.request("sendText", { sessionId: info.sessionId, turnId: "turn-2", text: "report-resume" }, ORIGIN);
    const answer = await later.until("chat-completed", (event) => event.turnId === "turn-2");
    expect(answer.text).toMatch(/^resumed=[0-9a-f-]{36}$/);
    await later.until("turn-completed", (event) => event.turnId === "turn-2");
  });

  it("replays what a page missed after the seq it names, in order and once, before live events", async () => {
    await core();
    const page = await connect();
    const events = collectSessionEvents(page, DEADLINE_MS);
    const { sessionId } = await page.request("createSession", { provider: "claude" }, ORIGIN);
    await page.request("sendText", { sessionId, turnId: "turn-1", text: "reply: first" }, ORIGIN);
    await events.until("turn-completed");

    const reloaded = await connect();
    const seen = envelopes(reloaded);
    const info = await reloaded.request("resumeSession", { sessionId, afterSeq: 2 }, ORIGIN);
    await waitFor(() => seen.length === info.lastSeq - 2, "the replay");
    expect(seen.map((envelope) => envelope.seq)).toEqual(Array.from({ length: info.lastSeq - 2 }, (_, index) => index + 3));
    expect(seen.at(-1)?.event.type).toBe("turn-completed");

    await reloaded.request("sendText", { sessionId, turnId: "turn-2", text: "reply: second" }, ORIGIN);
    await waitFor(() => seen.some((envelope) => envelope.event.type === "turn-completed" && envelope.event.turnId === "turn-2"), "turn 2");
    const seqs = seen.map((envelope) => envelope.seq);
    expect(seqs).toEqual([...new Set(seqs)].sort((a, b) => a - b));
    expect(seqs[0]).toBe(3);

    // Without afterSeq nothing old is sent again.
    const plain = await connect();
    const plainSeen = envelopes(plain);
    const plainInfo = await plain.request("resumeSession", { sessionId }, ORIGIN);
    await plain.request("subscribeSession", { sessionId, afterSeq: plainInfo.lastSeq }, ORIGIN);
    expect(plainSeen).toEqual([]);
  });

  it("fails a turn that was running when Core stopped, and the next message continues", async () => {
    const first = await core();
    const page = await connect();
    const events = collectSessionEvents(page, DEADLINE_MS);
    const { sessionId, workspace } = await page.request("createSession", { provider: "claude" }, ORIGIN);
    await page.request("sendText", { sessionId, turnId: "turn-1", text: "reply: ok" }, ORIGIN);
    await events.until("turn-completed");
    await page.request("sendText", { sessionId, turnId: "turn-2", text: "hang" }, ORIGIN);
    await waitFor(() => exists(join(workspace.path, ".stand-in-hanging")), "the hanging provider");
    await stopCore(first);
    // A page still connected hears why its turn ended.
    const failed = await events.until("turn-failed", (event) => event.turnId === "turn-2");
    expect(failed.error.code).toBe("SESSION_ERROR");

    await core();
    const again = await connect();
    const later = collectSessionEvents(again, DEADLINE_MS);
    const resumed = await again.request("resumeSession", { sessionId }, ORIGIN);
    expect(resumed).toMatchObject({ status: "error", activeTurn: null });
    await again.request("sendText", { sessionId, turnId: "turn-3", text: "report-resume" }, ORIGIN);
    expect((await later.until("chat-completed", (event) => event.turnId === "turn-3")).text).toMatch(/^resumed=[0-9a-f-]{36}$/);
  });

  it("after kill -9 mid-turn: the provider is reaped, the turn ends with SESSION_ERROR on replay, and the next turn works", async () => {
    const child = spawn(process.execPath, [CORE_ENTRY], { env, stdio: ["ignore", "ignore", "pipe"] });
    children.push(child);
    await waitFor(() => exists(join(home, "run", "core.sock")), "Core listening");
    const page = await connect();
    const events = collectSessionEvents(page, DEADLINE_MS);
    const { sessionId, workspace } = await page.request("createSession", { provider: "claude" }, ORIGIN);
    await page.request("sendText", { sessionId, turnId: "turn-1", text: "reply: before the crash" }, ORIGIN);
    await events.until("turn-completed");
    await page.request("sendText", { sessionId, turnId: "turn-2", text: "hang" }, ORIGIN);
    await waitFor(() => exists(join(workspace.path, ".stand-in-hanging")), "the hanging provider");
    const ledger = join(home, "run", "provider-processes");
    const providerPids = (await readdir(ledger)).map(Number).filter((pid) => Number.isInteger(pid) && pid > 0);
    expect(providerPids.length).toBeGreaterThan(0);
    const lastSeen = await page.request("resumeSession", { sessionId }, ORIGIN);

    const killedAt = performance.now();
    child.kill("SIGKILL");
    await new Promise((resolvePromise) => child.once("exit", resolvePromise));
    await core();
    await waitFor(() => providerPids.every((pid) => !processAlive(pid)), "the provider of the killed Core to be gone");

    const again = await connect();
    const seen = envelopes(again);
    const later = collectSessionEvents(again, DEADLINE_MS);
    const resumed = await again.request("resumeSession", { sessionId, afterSeq: lastSeen.lastSeq }, ORIGIN);
    expect(resumed).toMatchObject({ status: "error", activeTurn: null });
    await waitFor(() => seen.length >= resumed.lastSeq - lastSeen.lastSeq, "the replay of the failed turn");
    expect(seen.map((envelope) => envelope.event)).toEqual([
      { type: "status-changed", status: "error", turnId: "turn-2" },
      {
        type: "turn-failed",
        turnId: "turn-2",
        turnKind: "user",
        error: { code: "SESSION_ERROR", message: expect.stringContaining("Core stopped"), details: { cause: "core-stopped" } },
      },
    ]);
    // The page whose sendText of turn-2 failed with the link cannot know it arrived: sent again, it starts nothing.
    expect(await again.request("sendText", { sessionId, turnId: "turn-2", text: "hang" }, ORIGIN)).toEqual({ turnId: "turn-2" });
    await again.request("sendText", { sessionId, turnId: "turn-3", text: "report-resume" }, ORIGIN);
    expect((await later.until("chat-completed", (event) => event.turnId === "turn-3")).text).toMatch(/^resumed=[0-9a-f-]{36}$/);
    await later.until("turn-completed", (event) => event.turnId === "turn-3");
    expect(seen.filter((envelope) => envelope.event.type === "turn-started").map((envelope) => envelope.event)).toEqual([
      { type: "turn-started", turnId: "turn-3", turnKind: "user" },
    ]);
    console.log(`[recovery] kill -9 → restarted Core → resumed → next turn completed: ${Math.round(performance.now() - killedAt)} ms`);
  });

  it("starts a turn once when its sendText arrives twice, running or over, before and after a restart", async () => {
    const first = await core();
    const page = await connect();
    const seen = envelopes(page);
    const events = collectSessionEvents(page, DEADLINE_MS);
    const { sessionId, workspace } = await page.request("createSession", { provider: "claude" }, ORIGIN);
    await page.request("sendText", { sessionId, turnId: "turn-1", text: "hang" }, ORIGIN);
    await waitFor(() => exists(join(workspace.path, ".stand-in-hanging")), "the hanging provider");
    // Running: answered with the same turn, not SESSION_BUSY.
    expect(await page.request("sendText", { sessionId, turnId: "turn-1", text: "hang" }, ORIGIN)).toEqual({ turnId: "turn-1" });
    // Another turn id is still refused while it runs.
    expect(await codeOf(page.request("sendText", { sessionId, turnId: "turn-x", text: "hang" }, ORIGIN))).toBe("SESSION_BUSY");
    await page.request("cancelTurn", { sessionId }, ORIGIN);
    await events.until("turn-failed", (event) => event.turnId === "turn-1");
    // Over: still the same turn.
    expect(await page.request("sendText", { sessionId, turnId: "turn-1", text: "hang" }, ORIGIN)).toEqual({ turnId: "turn-1" });
    await stopCore(first);

    await core();
    const again = await connect();
    const later = envelopes(again);
    await again.request("resumeSession", { sessionId }, ORIGIN);
    expect(await again.request("sendText", { sessionId, turnId: "turn-1", text: "hang" }, ORIGIN)).toEqual({ turnId: "turn-1" });
    expect(await again.request("prepareSession", { sessionId, turnId: "turn-1" }, ORIGIN)).toEqual({ turnId: "turn-1" });
    await again.request("sendText", { sessionId, turnId: "turn-2", text: "reply: fresh" }, ORIGIN);
    await waitFor(() => later.some((envelope) => envelope.event.type === "turn-completed"), "the next turn to complete");
    const started = [...seen, ...later].filter((envelope) => envelope.event.type === "turn-started").map((envelope) => envelope.event);
    expect(started).toEqual([
      { type: "turn-started", turnId: "turn-1", turnKind: "user" },
      { type: "turn-started", turnId: "turn-2", turnKind: "user" },
    ]);
  });

  it("keeps the workspaces of resumable sessions and removes those of ended ones across a restart", async () => {
    const first = await core();
    const page = await connect();
    const kept = await page.request("createSession", { provider: "claude" }, ORIGIN);
    const ended = await page.request("createSession", { provider: "claude" }, ORIGIN);
    await page.request("endSession", { sessionId: ended.sessionId }, ORIGIN);
    await stopCore(first);
    await core();
    expect(await exists(kept.workspace.path)).toBe(true);
    expect(await exists(ended.workspace.path)).toBe(false);
    const again = await connect();
    expect(await again.request("resumeSession", { sessionId: ended.sessionId }, ORIGIN)).toMatchObject({ status: "ended" });
  });

  it("reports a corrupt store with SESSION_STORE_FAILED, leaves the file alone, and still answers ping", async () => {
    const garbage = Buffer.from("this is not a SQLite database, and Core must not replace it\n".repeat(64));
    await writeFile(join(home, "sessions.db"), garbage);
    await core();
    const page = await connect();
    await expect(page.request("ping", {})).resolves.toMatchObject({ home });
    const failure = await page.request("createSession", { provider: "claude" }, ORIGIN).catch((error: unknown) => error);
    expect(failure).toMatchObject({ code: "SESSION_STORE_FAILED" });
    expect((failure as Error).message).toContain(join(home, "sessions.db"));
    expect(await readFile(join(home, "sessions.db"))).toEqual(garbage);
    expect((await stat(join(home, "sessions.db"))).size).toBe(garbage.length);
  });
});

describe("tool calls are handed out once", () => {
  it("to the first claimant only; a released claim is requested again and answered once", async () => {
    await core();
    const page = await connect();
    const events = collectSessionEvents(page, DEADLINE_MS);
    const seen = envelopes(page);
    const { sessionId } = await page.request("createSession", { provider: "claude", skills: { guidance: "", tools: [addTodoTool(10_000)] } }, ORIGIN);
    await page.request("sendText", { sessionId, turnId: "turn-1", text: 'call-tool add_todo {"title":"Milk"}' }, ORIGIN);
    const requested = await events.until("tool-call-requested");
    const { toolRequestId } = requested;
    const info = await page.request("resumeSession", { sessionId }, ORIGIN);
    expect(info.pendingToolCalls).toEqual([{ turnId: "turn-1", toolRequestId, toolName: "add_todo", args: { title: "Milk" }, timeoutMs: 10_000 }]);
    expect(info.activeTurn).toEqual({ turnId: "turn-1", turnKind: "user" });

    const claim = (claimant: string) => page.request("claimToolCall", { sessionId, toolRequestId, claimant }, ORIGIN);
    const submit = (claimant: string, title: string) =>
      page.request("submitToolResult", { sessionId, toolRequestId, claimant, outcome: { ok: true, result: { title } } }, ORIGIN);
    await expect(claim("tab-a")).resolves.toEqual({ claimed: true });
    await expect(claim("tab-b")).resolves.toEqual({ claimed: false });
    expect(await codeOf(submit("tab-b", "from b"))).toBe("TOOL_CALL_CLAIMED");

    // Tab A went away without answering: the call is requested again, same id, new seq.
    await expect(page.request("releaseToolClaims", { claimant: "tab-a" }, ORIGIN)).resolves.toEqual({ released: 1 });
    await waitFor(() => seen.filter((envelope) => envelope.event.type === "tool-call-requested").length === 2, "the second request");
    const [firstRequest, again] = seen.filter((envelope) => envelope.event.type === "tool-call-requested");
    expect(again!.seq).toBeGreaterThan(firstRequest!.seq);
    expect(again!.event).toEqual(firstRequest!.event);
    await expect(claim("tab-b")).resolves.toEqual({ claimed: true });
    await expect(submit("tab-b", "from b")).resolves.toEqual({ accepted: true });
    expect(await codeOf(submit("tab-b", "twice"))).toBe("TOOL_CALL_NOT_PENDING");
    const answer = await events.until("chat-completed", (event) => event.turnId === "turn-1");
    expect(answer.text).toMatch(/^Tool add_todo returned: .*from b/);
    expect(events.seen.filter((event) => event.type === "tool-call-settled")).toHaveLength(1);
  });

  it("releases the claims of a connection that closes, for the pages on another", async () => {
    await core();
    const first = await connect();
    const events = collectSessionEvents(first, DEADLINE_MS);
    const { sessionId } = await first.request(
      "createSession",
      { provider: "claude", skills: { guidance: "", tools: [addTodoTool(10_000)] } },
      ORIGIN,
    );
    await first.request("sendText", { sessionId, turnId: "turn-1", text: 'call-tool add_todo {"title":"Eggs"}' }, ORIGIN);
    const { toolRequestId } = await events.until("tool-call-requested");
    await expect(first.request("claimToolCall", { sessionId, toolRequestId, claimant: "route-1" }, ORIGIN)).resolves.toEqual({ claimed: true });

    const second = await connect();
    const secondEvents = collectSessionEvents(second, DEADLINE_MS);
    await second.request("resumeSession", { sessionId }, ORIGIN);
    // The same claimant name on another connection is another page.
    await expect(second.request("claimToolCall", { sessionId, toolRequestId, claimant: "route-1" }, ORIGIN)).resolves.toEqual({ claimed: false });
    first.close();
    await secondEvents.until("tool-call-requested", (event) => event.toolRequestId === toolRequestId);
    await expect(second.request("claimToolCall", { sessionId, toolRequestId, claimant: "route-1" }, ORIGIN)).resolves.toEqual({ claimed: true });
    await second.request("submitToolResult", { sessionId, toolRequestId, claimant: "route-1", outcome: { ok: true, result: "eggs added" } }, ORIGIN);
    expect((await secondEvents.until("chat-completed")).text).toMatch(/eggs added/);
  });

  it("refuses a result that arrives after TOOL_TIMEOUT, and never applies it", async () => {
    await core();
    const page = await connect();
    const events = collectSessionEvents(page, DEADLINE_MS);
    const { sessionId } = await page.request("createSession", { provider: "claude", skills: { guidance: "", tools: [addTodoTool(300)] } }, ORIGIN);
    await page.request("sendText", { sessionId, turnId: "turn-1", text: 'call-tool add_todo {"title":"Late"}' }, ORIGIN);
    const { toolRequestId } = await events.until("tool-call-requested");
    expect((await events.until("tool-call-settled")).outcome).toBe("timed-out");
    const late = page.request("submitToolResult", { sessionId, toolRequestId, outcome: { ok: true, result: "too late" } }, ORIGIN);
    expect(await codeOf(late)).toBe("TOOL_TIMEOUT");
    expect(await codeOf(page.request("claimToolCall", { sessionId, toolRequestId, claimant: "tab" }, ORIGIN))).toBe("TOOL_TIMEOUT");
    const answer = await events.until("chat-completed");
    expect(answer.text).toMatch(/^Tool add_todo failed: .*TOOL_TIMEOUT/);
    expect(answer.text).not.toContain("too late");
  });
});

describe("prepareSession", () => {
  it("runs one hidden prepare turn with the first prompt, then has nothing left to prepare", async () => {
    await core();
    const page = await connect();
    const events = collectSessionEvents(page, DEADLINE_MS);
    const { sessionId } = await page.request(
      "createSession",
      { provider: "claude", skills: { guidance: "Be brief.", tools: [addTodoTool(5_000)] } },
      ORIGIN,
    );
    await expect(page.request("prepareSession", { sessionId, turnId: "prep-1" }, ORIGIN)).resolves.toEqual({ turnId: "prep-1" });
    expect(await codeOf(page.request("prepareSession", { sessionId, turnId: "prep-2" }, ORIGIN))).toBe("SESSION_BUSY");
    expect(await codeOf(page.request("sendText", { sessionId, turnId: "turn-x", text: "hi" }, ORIGIN))).toBe("SESSION_BUSY");
    expect(await events.until("turn-started")).toEqual({ type: "turn-started", turnId: "prep-1", turnKind: "prepare" });
    expect(await events.until("turn-completed")).toEqual({ type: "turn-completed", turnId: "prep-1", turnKind: "prepare" });
    await expect(page.request("prepareSession", { sessionId, turnId: "prep-3" }, ORIGIN)).resolves.toEqual({ turnId: null });

    // The first real message continues the prepared conversation rather than starting one.
    await page.request("sendText", { sessionId, turnId: "turn-1", text: "report-resume" }, ORIGIN);
    expect((await events.until("chat-completed", (event) => event.turnId === "turn-1")).text).toMatch(/^resumed=[0-9a-f-]{36}$/);
  });
});
