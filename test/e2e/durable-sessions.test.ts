import { execFileSync } from "node:child_process";
import { access, readdir } from "node:fs/promises";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterEach, describe, expect, it } from "vitest";
import { answerApproval, corePidOf, nativeHostPidsFor, openSdkPage, setUpE2e, watchApprovalWindows, type E2eEnvironment } from "./harness.js";
import { attempt } from "./page-scripts.js";

let environment: E2eEnvironment | undefined;

afterEach(async () => {
  await environment?.close();
  environment = undefined;
});

/** What a test page keeps in sessionStorage, where it outlives a reload of the tab. */
const RESUME_KEY = "durable-test-resume";
const HANDLER_RUNS_KEY = "durable-test-handler-runs";
const WAIT_MS = 20_000;

interface WireEvent {
  seq: number;
  type: string;
  turnId?: string;
  toolRequestId?: string;
  text?: string;
  outcome?: string;
  code?: string;
}

interface PageEvent {
  kind: "chat" | "status" | "activity" | "error" | "ended";
  seq?: number;
  turnId?: string;
  text?: string;
  status?: string;
  code?: string;
  source?: string;
}

interface HandlerRun {
  tab: string;
  title: string;
  toolRequestId: string;
}

interface TurnResult {
  ok: boolean;
  code?: string;
  message?: string;
}

/**
 * Prepares the SDK test page as one tab of an app: the raw event envelopes the extension sends this page (recorded
 * before the SDK sees them, so duplicates the SDK would drop still show), every callback the session makes, and an
 * `add_todo` handler that counts its runs in this page and in sessionStorage (across reloads of the tab). Its mode:
 * answer at once, hold the call forever, or answer and reload the tab in the same task.
 */
async function installAppPage(page: Page, tabName: string): Promise<void> {
  await page.evaluate(
    ({ name, resumeKey, runsKey }) => {
      const w = window as any;
      w.tabName = name;
      w.wire = [];
      w.events = [];
      w.handlerRuns = [];
      w.toolMode = "answer";
      w.saveOnRunning = false;

      // The SDK connects as soon as a client is built: watch its port first.
      const runtime = (globalThis as any).chrome.runtime;
      const connect = runtime.connect.bind(runtime);
      w.sentRequests = [];
      runtime.connect = (...args: unknown[]) => {
        const port = connect(...args);
        const post = port.postMessage.bind(port);
        port.postMessage = (message: any) => {
          w.sentRequests.push(message?.type);
          post(message);
        };
        port.onMessage.addListener((message: any) => {
          if (message?.type !== "event") return;
          const event = message.event;
          w.wire.push({
            seq: message.seq,
            type: event.type,
            turnId: event.turnId,
            toolRequestId: event.toolRequestId,
            text: event.text,
            outcome: event.outcome,
            code: event.error?.code,
          });
        });
        return port;
      };

      w.tools = [
        w.sdk.defineTool({
          name: "add_todo",
          description: "Add a card to the to-do board",
          argsSchema: {
            type: "object",
            properties: { title: { type: "string", minLength: 1, maxLength: 100 } },
            required: ["title"],
            additionalProperties: false,
          },
        }),
      ];
      w.saveForReload = () => sessionStorage.setItem(resumeKey, JSON.stringify({ sessionId: w.session.sessionId, lastSeq: w.session.lastSeq }));
      w.addTodo = (args: { title: string }, context: { toolRequestId: string }) => {
        const run = { tab: w.tabName, title: args.title, toolRequestId: context.toolRequestId };
        w.handlerRuns.push(run);
        const runs = JSON.parse(sessionStorage.getItem(runsKey) ?? "[]");
        runs.push(run);
        sessionStorage.setItem(runsKey, JSON.stringify(runs));
        if (w.toolMode === "hold") return new Promise(() => undefined);
        const result = { title: args.title, addedBy: w.tabName };
        if (w.toolMode === "answer-then-reload") {
          w.saveForReload();
          location.reload();
        }
        return result;
      };
      w.follow = (session: any) => {
        w.session = session;
        const note = (entry: object) => w.events.push(entry);
        session.onChat((message: any, context: any) => note({ kind: "chat", text: message.text, turnId: context.turnId, seq: context.seq }));
        session.onStatus((status: string, context: any) => {
          note({ kind: "status", status, source: context.source, turnId: context.turnId, seq: context.seq });
          if (status === "running" && w.saveOnRunning) {
            w.saveOnRunning = false;
            w.saveForReload();
          }
        });
        session.onActivity((activity: any, context: any) =>
          note({ kind: "activity", text: activity.title, turnId: context.turnId, seq: context.seq }),
        );
        session.onError((error: any, context: any) =>
          note({ kind: "error", code: error.code, text: error.message, source: context.source, turnId: context.turnId, seq: context.seq }),
        );
        session.onEnded(() => note({ kind: "ended" }));
        session.onTool("add_todo", w.addTodo);
      };
      w.pedelec = new w.sdk.Pedelec();
      w.create = async (extra: object = {}) => {
        const session = await w.pedelec.createSession({
          provider: "claude",
          skills: { guidance: "A to-do board.", tools: w.tools },
          // The session outlives its tabs: reloads and a browser restart must not end it.
          autoEndOnDisconnect: false,
          ...extra,
        });
        w.follow(session);
        return { sessionId: session.sessionId, workspace: session.workspace.path };
      };
      w.resume = async (sessionId: string, afterSeq?: number) => {
        const session = await w.pedelec.resumeSession(sessionId, afterSeq === undefined ? undefined : { afterSeq });
        w.follow(session);
        return { status: session.getStatus(), lastSeq: session.lastSeq };
      };
      w.startTurn = (text: string) => {
        w.turn = w.session.sendText(text).then(
          () => ({ ok: true }),
          (error: any) => ({ ok: false, code: error.code, message: error.message }),
        );
      };
      w.send = (text: string) => {
        w.startTurn(text);
        return w.turn;
      };
    },
    { name: tabName, resumeKey: RESUME_KEY, runsKey: HANDLER_RUNS_KEY },
  );
}

async function openAppTab(target: E2eEnvironment, tabName: string): Promise<Page> {
  const page = await openSdkPage(target);
  await installAppPage(page, tabName);
  return page;
}

/** Creates the session in `page`, answering the approval question the first time this origin asks. */
async function createApprovedSession(target: E2eEnvironment, page: Page): Promise<{ sessionId: string; workspace: string }> {
  const created = attempt<{ sessionId: string; workspace: string }>(page, "return await window.create();");
  await answerApproval(target.context, new URL(target.server.url).origin, "approve");
  const result = await created;
  if (!result.ok) throw new Error(`createSession failed: ${result.code} ${result.message}`);
  return result.value;
}

async function resumeIn(page: Page, sessionId: string, afterSeq?: number): Promise<{ status: string; lastSeq: number }> {
  const resumed = await attempt<{ status: string; lastSeq: number }>(
    page,
    `return await window.resume(${JSON.stringify(sessionId)}${afterSeq === undefined ? "" : `, ${afterSeq}`});`,
  );
  if (!resumed.ok) throw new Error(`resumeSession failed: ${resumed.code} ${resumed.message}`);
  return resumed.value;
}

/** Reloads the tab (or waits for the reload it started itself) and prepares the new document. */
async function reloadedTab(page: Page, tabName: string, reload: Promise<unknown>): Promise<void> {
  await reload;
  await page.waitForFunction(() => (window as any).sdkReady === true, undefined, { timeout: WAIT_MS });
  await installAppPage(page, tabName);
}

function send(page: Page, text: string): Promise<TurnResult> {
  return page.evaluate((message) => (window as any).send(message), text);
}

const wireOf = (page: Page): Promise<WireEvent[]> => page.evaluate(() => (window as any).wire);
const eventsOf = (page: Page): Promise<PageEvent[]> => page.evaluate(() => (window as any).events);
const handlerRunsOf = (page: Page): Promise<HandlerRun[]> => page.evaluate(() => (window as any).handlerRuns);
const runsAcrossReloads = (page: Page): Promise<HandlerRun[]> =>
  page.evaluate((key) => JSON.parse(sessionStorage.getItem(key) ?? "[]"), HANDLER_RUNS_KEY);
const savedForReload = (page: Page): Promise<{ sessionId: string; lastSeq: number }> =>
  page.evaluate((key) => JSON.parse(sessionStorage.getItem(key) ?? "null"), RESUME_KEY);

/** Waits, inside the page, until `predicate(window)` is true. */
async function until(page: Page, predicate: string, timeout = WAIT_MS): Promise<void> {
  await page.waitForFunction(`(() => { const w = window; return ${predicate}; })()`, undefined, { timeout, polling: 50 });
}

/** The claude stand-in's conversation ids: one file per conversation under CLAUDE_CONFIG_DIR/projects/<cwd>/. */
async function conversationIdsIn(home: string): Promise<string[]> {
  const projects = join(home, "claude-state", "projects");
  const ids: string[] = [];
  for (const folder of await readdir(projects).catch(() => [] as string[])) {
    for (const file of await readdir(join(projects, folder))) if (file.endsWith(".jsonl")) ids.push(file.slice(0, -".jsonl".length));
  }
  return ids;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * The session's whole stored history as a fresh tab receives it (resumed after seq 0), once it reached `throughSeq`.
 * The observing tab's handler holds every call, so it could not answer one behind the test's back.
 */
async function historyOf(target: E2eEnvironment, sessionId: string, throughSeq: number): Promise<WireEvent[]> {
  const observer = await openAppTab(target, "observer");
  try {
    await observer.evaluate(() => ((window as any).toolMode = "hold"));
    await resumeIn(observer, sessionId, 0);
    await until(observer, `w.wire.some((event) => event.seq >= ${throughSeq})`);
    expect(await handlerRunsOf(observer)).toEqual([]);
    return await wireOf(observer);
  } finally {
    await observer.close();
  }
}

function expectOnceEachInOrder(events: readonly WireEvent[], afterSeq: number): void {
  const seqs = events.map((event) => event.seq);
  const last = seqs.at(-1) ?? afterSeq;
  // Every event after afterSeq arrived, exactly once, in seq order (Core numbers a session's events without gaps).
  expect(seqs).toEqual(Array.from({ length: last - afterSeq }, (_, index) => afterSeq + 1 + index));
}

const TOOL_ANSWER = /^Tool add_todo returned: /;

/** Bytes sent to Core's socket that Core has not read yet, from the kernel's view of its open connections (`ss`). */
function unreadBytesIn(socketPath: string): number {
  const lines = execFileSync("ss", ["-x", "-a", "-n"], { encoding: "utf8" }).split("\n");
  let unread = 0;
  for (const line of lines) {
    const [, state, receiveQueue, , local] = line.trim().split(/\s+/);
    if (state === "ESTAB" && local === socketPath) unread += Number(receiveQueue);
  }
  return unread;
}

describe("durable sessions in real Chromium", () => {
  it("continues the conversation after Core is killed with SIGKILL between turns", async () => {
    environment = await setUpE2e();
    const page = await openAppTab(environment, "A");
    await createApprovedSession(environment, page);
    expect(await send(page, "reply: before the crash")).toEqual({ ok: true });
    const conversations = await conversationIdsIn(environment.home);
    expect(conversations).toHaveLength(1);
    // The same kind of turn with nothing broken, to compare the recovery with.
    const baselineStartedAt = performance.now();
    expect(await send(page, "report-resume")).toEqual({ ok: true });
    const baselineMs = performance.now() - baselineStartedAt;

    const killed = await corePidOf(environment);
    const killedAt = performance.now();
    process.kill(killed, "SIGKILL");
    // The page hears that its link to Core broke, even with no turn running.
    await until(page, `w.events.some((event) => event.kind === "error" && event.code === "CORE_RUNTIME_UNAVAILABLE")`);
    const noticedMs = performance.now() - killedAt;

    const result = await send(page, "report-resume");
    const recoveryMs = performance.now() - killedAt;
    expect(result).toEqual({ ok: true });
    // The native host started a new Core, which took the session from its store and resumed the provider's conversation.
    const restarted = await corePidOf(environment);
    expect(restarted).not.toBe(killed);
    expect(alive(restarted)).toBe(true);
    const chat = (await eventsOf(page)).filter((event) => event.kind === "chat").map((event) => event.text);
    expect(chat).toEqual(["before the crash", `resumed=${conversations[0]}`, `resumed=${conversations[0]}`]);
    expect(await conversationIdsIn(environment.home)).toEqual(conversations);
    console.log(
      `kill -9 between turns: page noticed after ${noticedMs.toFixed(0)} ms; recovery ms (kill → next sendText resolved): ` +
        `${recoveryMs.toFixed(0)} (the same turn without a crash: ${baselineMs.toFixed(0)} ms)`,
    );
  });

  it("fails the running turn when Core is killed mid-turn, and runs the next one", async () => {
    environment = await setUpE2e();
    const page = await openAppTab(environment, "A");
    const { workspace } = await createApprovedSession(environment, page);
    await page.evaluate(() => (window as any).startTurn("hang"));
    // The agent is at work and has written its first line.
    await expect
      .poll(
        () =>
          access(join(workspace, ".stand-in-hanging")).then(
            () => true,
            () => false,
          ),
        { timeout: WAIT_MS },
      )
      .toBe(true);
    const hangTurn = (await eventsOf(page)).find((event) => event.kind === "status" && event.status === "running")?.turnId;
    expect(hangTurn).toBeDefined();

    const killed = await corePidOf(environment);
    const killedAt = performance.now();
    process.kill(killed, "SIGKILL");
    const failed: TurnResult = await page.evaluate(() => (window as any).turn);
    expect(["CORE_RUNTIME_UNAVAILABLE", "SESSION_ERROR"]).toContain(failed.code);
    expect(failed.ok).toBe(false);

    const next = await send(page, "reply: after the crash");
    const recoveryMs = performance.now() - killedAt;
    expect(next).toEqual({ ok: true });
    expect(await corePidOf(environment)).not.toBe(killed);

    const events = await eventsOf(page);
    const hangErrors = events.filter((event) => event.kind === "error" && event.turnId === hangTurn);
    // The first report of the failure carries the code sendText rejected with.
    expect(hangErrors[0]).toMatchObject({ code: failed.code });
    // Core's own record of the failure (the Core that came next found the turn running in its store) reached this page.
    const wire = await wireOf(page);
    const turnFailures = wire.filter((event) => event.type === "turn-failed" && event.turnId === hangTurn);
    expect(turnFailures.map((event) => event.code)).toContain("SESSION_ERROR");
    expect(new Set(turnFailures.map((event) => event.seq)).size).toBe(1);
    expect(events.filter((event) => event.kind === "chat").map((event) => event.text)).toEqual(["after the crash"]);
    // One failure in the status too: error once, then the next turn's running → idle.
    const statuses = events.filter((event) => event.kind === "status").map((event) => event.status);
    expect(statuses).toEqual(["running", "error", "running", "idle"]);
    console.log(`kill -9 mid-turn: recovery ms (kill → next sendText resolved): ${recoveryMs.toFixed(0)}`);
  });

  it("delivers a message once when Core dies with it unanswered: sent again under its turn id, run by the next Core", async () => {
    environment = await setUpE2e();
    const page = await openAppTab(environment, "A");
    await createApprovedSession(environment, page);
    expect(await send(page, "reply: before")).toEqual({ ok: true });

    // Core stops reading, so the message waits in its socket, sent and unanswered, when Core is killed.
    const killed = await corePidOf(environment);
    const socketPath = join(environment.home, "run", "core.sock");
    process.kill(killed, "SIGSTOP");
    const killedAt = performance.now();
    await page.evaluate(() => (window as any).startTurn("reply: sent as Core died"));
    await expect.poll(() => unreadBytesIn(socketPath), { timeout: WAIT_MS }).toBeGreaterThan(0);
    process.kill(killed, "SIGKILL");

    const outcome = await page.evaluate(() => (window as any).turn);
    expect(outcome).toEqual({ ok: true });
    const recoveryMs = performance.now() - killedAt;
    expect(await corePidOf(environment)).not.toBe(killed);
    const sent: string[] = await page.evaluate(() => (window as any).sentRequests);
    // One sendText for the first turn, two for this one (the first copy died unanswered with Core); the agent got it once.
    expect(sent.filter((type) => type === "sendText")).toHaveLength(3);
    const chat = (await eventsOf(page)).filter((event) => event.kind === "chat").map((event) => event.text);
    expect(chat).toEqual(["before", "sent as Core died"]);
    const started = (await wireOf(page)).filter((event) => event.type === "turn-started");
    expect(started).toHaveLength(2);
    console.log(`kill -9 with a sendText unanswered: recovery ms (kill → that sendText resolved): ${recoveryMs.toFixed(0)}`);
  });

  it("replays what a reloaded tab missed mid-turn once each, in order, after afterSeq", async () => {
    environment = await setUpE2e({ startCore: true });
    const page = await openAppTab(environment, "first");
    const { sessionId } = await createApprovedSession(environment, page);
    // The first life holds the tool call, so the turn is still running when the tab reloads.
    await page.evaluate(() => {
      const w = window as any;
      w.toolMode = "hold";
      w.saveOnRunning = true;
      w.startTurn('call-tool add_todo {"title":"Eggs"}');
    });
    await until(page, "w.handlerRuns.length === 1");
    const firstLife = await wireOf(page);
    const requested = firstLife.find((event) => event.type === "tool-call-requested")!;
    const saved = await savedForReload(page);
    expect(saved.sessionId).toBe(sessionId);
    // Saved when the turn began: everything after it (the command, the tool call) is what the reloaded tab replays.
    expect(saved.lastSeq).toBeLessThan(requested.seq);

    await reloadedTab(page, "reloaded", page.reload());
    const resumed = await resumeIn(page, sessionId, saved.lastSeq);
    expect(resumed.status).toBe("waiting_tool_result");
    await until(page, `w.events.some((event) => event.kind === "chat") && w.session.getStatus() === "idle"`);

    const wire = await wireOf(page);
    expectOnceEachInOrder(wire, saved.lastSeq);
    // The replay carried the request the first life saw; the reloaded tab ran the call.
    expect(wire).toContainEqual(expect.objectContaining({ seq: requested.seq, type: "tool-call-requested" }));
    expect(await handlerRunsOf(page)).toEqual([{ tab: "reloaded", title: "Eggs", toolRequestId: requested.toolRequestId }]);
    expect(wire.filter((event) => event.type === "turn-completed").map((event) => event.turnId)).toEqual([requested.turnId]);
    expect(wire.filter((event) => event.type === "tool-call-settled")).toEqual([
      expect.objectContaining({ toolRequestId: requested.toolRequestId, outcome: "answered" }),
    ]);
    const events = await eventsOf(page);
    const chat = events.filter((event) => event.kind === "chat");
    expect(chat).toHaveLength(1);
    expect(chat[0]!.turnId).toBe(requested.turnId);
    expect(chat[0]!.text).toMatch(TOOL_ANSWER);
    expect(chat[0]!.text).toContain('"addedBy":"reloaded"');
    // Replayed history reached the callbacks too (the command the agent ran before the reload), in seq order.
    expect(events.some((event) => event.kind === "activity" && (event.seq ?? 0) < requested.seq)).toBe(true);
    const seqs = events.flatMap((event) => (event.seq === undefined ? [] : [event.seq]));
    expect([...seqs].sort((a, b) => a - b)).toEqual(seqs);
    expect(events.filter((event) => event.kind === "error")).toEqual([]);
  });

  it("runs a tool call left unanswered by a reloaded tab exactly once, in the reloaded tab", async () => {
    environment = await setUpE2e({ startCore: true });
    const page = await openAppTab(environment, "first");
    const { sessionId } = await createApprovedSession(environment, page);
    await page.evaluate(() => {
      const w = window as any;
      w.toolMode = "hold";
      w.startTurn('call-tool add_todo {"title":"Milk"}');
    });
    await until(page, "w.handlerRuns.length === 1");
    const [held] = await handlerRunsOf(page);

    await reloadedTab(page, "reloaded", page.reload());
    // No seq saved: the resume answer's pending calls are what tells the new document about the call.
    const resumed = await resumeIn(page, sessionId);
    expect(resumed.status).toBe("waiting_tool_result");
    await until(page, `w.events.some((event) => event.kind === "chat") && w.session.getStatus() === "idle"`);

    expect(await handlerRunsOf(page)).toEqual([{ tab: "reloaded", title: "Milk", toolRequestId: held!.toolRequestId }]);
    expect((await runsAcrossReloads(page)).map((run) => run.tab)).toEqual(["first", "reloaded"]);
    const chat = (await eventsOf(page)).filter((event) => event.kind === "chat").map((event) => event.text);
    expect(chat).toHaveLength(1);
    expect(chat[0]).toMatch(TOOL_ANSWER);
    expect(chat[0]).toContain('"title":"Milk"');
    expect(chat[0]).toContain('"addedBy":"reloaded"');

    const lastSeq: number = await page.evaluate(() => (window as any).session.lastSeq);
    const history = await historyOf(environment, sessionId, lastSeq);
    expectOnceEachInOrder(history, 0);
    const settled = history.filter((event) => event.type === "tool-call-settled");
    expect(settled).toEqual([expect.objectContaining({ toolRequestId: held!.toolRequestId, outcome: "answered" })]);
    expect(history.filter((event) => event.type === "turn-completed")).toHaveLength(1);
  });

  it("gives each tool call to exactly one of two tabs following the session", async () => {
    environment = await setUpE2e({ startCore: true });
    const tabA = await openAppTab(environment, "A");
    const { sessionId } = await createApprovedSession(environment, tabA);
    const tabB = await openAppTab(environment, "B");
    expect((await resumeIn(tabB, sessionId)).status).toBe("idle");

    const titles = ["Card 1", "Card 2", "Card 3"];
    for (const [index, title] of titles.entries()) {
      const sender = index % 2 === 0 ? tabA : tabB;
      expect(await send(sender, `call-tool add_todo {"title":"${title}"}`)).toEqual({ ok: true });
      // Both tabs saw the answer, so each has had every chance to run the call.
      for (const tab of [tabA, tabB]) await until(tab, `w.events.filter((event) => event.kind === "chat").length === ${index + 1}`);
    }

    const runs = [...(await handlerRunsOf(tabA)), ...(await handlerRunsOf(tabB))];
    expect(runs.map((run) => run.title).sort()).toEqual(titles);
    expect(new Set(runs.map((run) => run.toolRequestId)).size).toBe(titles.length);
    const answers = (await eventsOf(tabA)).filter((event) => event.kind === "chat").map((event) => event.text ?? "");
    expect(answers).toEqual((await eventsOf(tabB)).filter((event) => event.kind === "chat").map((event) => event.text));
    for (const [index, title] of titles.entries()) {
      const ran = runs.find((run) => run.title === title)!;
      // The agent got the result of the tab that ran the handler.
      expect(answers[index]).toMatch(TOOL_ANSWER);
      expect(answers[index]).toContain(`{"title":"${title}","addedBy":"${ran.tab}"}`);
    }
    console.log(`two tabs: handler runs by tab ${runs.map((run) => `${run.title}→${run.tab}`).join(", ")}`);
  });

  it("never runs a handler twice when its tab reloads right as the result leaves", async () => {
    environment = await setUpE2e({ startCore: true });
    const page = await openAppTab(environment, "first");
    const { sessionId } = await createApprovedSession(environment, page);
    await page.evaluate(() => ((window as any).toolMode = "answer-then-reload"));
    const reload = page.waitForEvent("load", { timeout: WAIT_MS });
    await page.evaluate(() => (window as any).startTurn('call-tool add_todo {"title":"Bread"}'));
    await reloadedTab(page, "reloaded", reload);

    const saved = await savedForReload(page);
    expect(saved.sessionId).toBe(sessionId);
    await resumeIn(page, sessionId, saved.lastSeq);
    await until(page, `w.events.some((event) => event.kind === "chat") && w.session.getStatus() === "idle"`);

    // One run in all: the first life's; its result reached the agent.
    const runs = await runsAcrossReloads(page);
    expect(runs.map((run) => ({ tab: run.tab, title: run.title }))).toEqual([{ tab: "first", title: "Bread" }]);
    expect(await handlerRunsOf(page)).toEqual([]);
    const chat = (await eventsOf(page)).filter((event) => event.kind === "chat").map((event) => event.text);
    expect(chat).toHaveLength(1);
    expect(chat[0]).toMatch(TOOL_ANSWER);
    expect(chat[0]).toContain('{"title":"Bread","addedBy":"first"}');
    const wire = await wireOf(page);
    expectOnceEachInOrder(wire, saved.lastSeq);
    expect(wire.filter((event) => event.type === "turn-completed")).toHaveLength(1);

    const lastSeq: number = await page.evaluate(() => (window as any).session.lastSeq);
    const history = await historyOf(environment, sessionId, lastSeq);
    expectOnceEachInOrder(history, 0);
    expect(history.filter((event) => event.type === "tool-call-settled").map((event) => event.outcome)).toEqual(["answered"]);
    expect(history.filter((event) => event.type === "turn-completed")).toHaveLength(1);
    expect(history.filter((event) => event.type === "turn-failed")).toEqual([]);
  });

  it("resumes a session after the browser is closed and opened again on the same profile", async () => {
    environment = await setUpE2e();
    const page = await openAppTab(environment, "A");
    const { sessionId } = await createApprovedSession(environment, page);
    expect(await send(page, "reply: before the browser closed")).toEqual({ ok: true });
    const conversations = await conversationIdsIn(environment.home);
    expect(conversations).toHaveLength(1);
    const core = await corePidOf(environment);
    const hosts = await nativeHostPidsFor(environment.home);
    expect(hosts).toHaveLength(1);

    const closedAt = performance.now();
    const context = await environment.reopenBrowser();
    // The old browser's native host is gone; Core is not.
    await expect
      .poll(async () => (await nativeHostPidsFor(environment!.home)).filter((pid) => hosts.includes(pid)), { timeout: WAIT_MS, interval: 50 })
      .toEqual([]);
    expect(alive(core)).toBe(true);
    const approvals = watchApprovalWindows(context);

    const reopened = await openAppTab(environment, "A again");
    const resumed = await resumeIn(reopened, sessionId);
    expect(resumed.status).toBe("idle");
    const result = await send(reopened, "report-resume");
    const recoveryMs = performance.now() - closedAt;
    expect(result).toEqual({ ok: true });
    // The same Core served it, the origin's approval was remembered, and the provider's conversation went on.
    expect(await corePidOf(environment)).toBe(core);
    expect(approvals.opened()).toBe(0);
    expect((await eventsOf(reopened)).filter((event) => event.kind === "chat").map((event) => event.text)).toEqual([`resumed=${conversations[0]}`]);
    console.log(`browser closed and reopened: ms from close to the resumed session's turn resolved: ${recoveryMs.toFixed(0)}`);
  });
});
