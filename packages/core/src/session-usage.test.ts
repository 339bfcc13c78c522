import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import type { SessionEvent, SessionEventEnvelope, SessionEventOf } from "@pedelec/protocol/session-events";
import type { TokenUsage } from "@pedelec/protocol/token-usage";
import { resolveCorePaths } from "./core-paths.js";
import { ProcessGroupLedger } from "./process-group-ledger.js";
import type { ProviderAdapter, ProviderEvent, ProviderTurnOutcome, ProviderTurnRequest } from "./providers/provider-adapter.js";
import { Session, USAGE_UPDATE_WINDOW_MS } from "./session.js";
import { SessionManager } from "./session-manager.js";
import { SessionStore } from "./session-store/session-store.js";
import { storedSession } from "./session-store/testing/stored-session.js";
import { loadSettings } from "./settings.js";
import { scriptedSessionSetup } from "./testing/scripted-session.js";

/** What one provider run does: hands over its events in reads (one turn of the event loop apart), then ends. */
interface ScriptedRun {
  reads: ProviderEvent[][];
  outcome?: ProviderTurnOutcome;
}

/** A provider whose every run takes the next script; runs without one complete at once, saying nothing. */
function scriptedAdapter(runs: ScriptedRun[]): ProviderAdapter {
  return {
    code: "claude",
    displayName: "Scripted",
    programName: "scripted",
    capabilities: { textDeltas: true, resume: true },
    runTurn: async (_request: ProviderTurnRequest, onEvent: (event: ProviderEvent) => void): Promise<ProviderTurnOutcome> => {
      const script = runs.shift() ?? { reads: [] };
      for (const [index, read] of script.reads.entries()) {
        if (index > 0) await new Promise((resolve) => setImmediate(resolve));
        for (const event of read) onEvent(event);
      }
      return script.outcome ?? { ok: true };
    },
  } as unknown as ProviderAdapter;
}

const usage = (counts: TokenUsage): ProviderEvent => ({ type: "usage", usage: counts });
const usageEvents = (published: readonly SessionEventEnvelope[]): SessionEventOf<"usage-updated">[] =>
  published.flatMap(({ event }) => (event.type === "usage-updated" ? [event] : []));
const turnOver = (published: readonly SessionEventEnvelope[], turnId: string): boolean =>
  published.some(({ event }) => (event.type === "turn-completed" || event.type === "turn-failed") && event.turnId === turnId);

function scriptedSession(runs: ScriptedRun[]) {
  const published: SessionEventEnvelope[] = [];
  const session = new Session(scriptedSessionSetup(scriptedAdapter(runs), published));
  const runTurn = async (turnId: string): Promise<void> => {
    session.startTurn(turnId, "go");
    await expect.poll(() => turnOver(published, turnId)).toBe(true);
  };
  return { session, published, runTurn };
}

describe("Session's token usage", () => {
  it("replaces a turn's usage with each report, adds turns up, and ignores a lower count of the same turn", async () => {
    const { session, published, runTurn } = scriptedSession([
      { reads: [[usage({ inputTokens: 1_000, cachedInputTokens: 800 })], [usage({ inputTokens: 1_000, cachedInputTokens: 800, outputTokens: 40 })]] },
      {
        reads: [
          [usage({ inputTokens: 2_000, outputTokens: 10 })],
          // Lower than before in this turn: ignored for that field, the higher input still counts.
          [usage({ inputTokens: 2_500, outputTokens: 7 })],
          [usage({ inputTokens: 1_500, outputTokens: 25, totalTokens: 2_525 })],
        ],
      },
    ]);
    expect(session.info().usage).toEqual({});
    await runTurn("turn-1");
    expect(session.info().usage).toEqual({ inputTokens: 1_000, cachedInputTokens: 800, outputTokens: 40 });
    await runTurn("turn-2");
    const updates = usageEvents(published);
    expect(updates.at(-1)).toEqual({
      type: "usage-updated",
      turnId: "turn-2",
      usage: { inputTokens: 2_500, outputTokens: 25, totalTokens: 2_525 },
      sessionUsage: { inputTokens: 3_500, cachedInputTokens: 800, outputTokens: 65, totalTokens: 2_525 },
    });
    expect(session.info().usage).toEqual(updates.at(-1)?.sessionUsage);
    // Never down, field by field, from one update to the next.
    for (const [index, update] of updates.entries()) {
      const previous = updates[index - 1];
      if (previous === undefined) continue;
      for (const field of ["inputTokens", "outputTokens", "cachedInputTokens", "totalTokens"] as const) {
        expect(update.sessionUsage[field] ?? 0).toBeGreaterThanOrEqual(previous.sessionUsage[field] ?? 0);
      }
    }
  });

  it("sends an update only when a report changed something, and before the turn's end", async () => {
    const { published, runTurn } = scriptedSession([
      { reads: [[usage({ outputTokens: 5 })], [usage({ outputTokens: 5 }), usage({}), usage({ outputTokens: 4 })], [usage({ outputTokens: 6 })]] },
    ]);
    await runTurn("turn-1");
    const types = published.map(({ event }) => event.type);
    expect(usageEvents(published).map((event) => event.usage)).toEqual([{ outputTokens: 5 }, { outputTokens: 6 }]);
    // The last update of the turn goes before the status and end it leaves, so sendText() settles with it known.
    expect(types.lastIndexOf("usage-updated")).toBeLessThan(types.indexOf("turn-completed"));
    const seqs = published.map((envelope) => envelope.seq);
    expect(seqs).toEqual(seqs.map((_, index) => index + 1));
  });

  it("adds what a provider that had to start afresh used in both runs of the turn", async () => {
    const lost: ProviderTurnOutcome = { ok: false, error: new PedelecError("PROVIDER_FAILED", "no such conversation"), conversationLost: true };
    const { session, published, runTurn } = scriptedSession([
      { reads: [[{ type: "provider-session-started", providerSessionId: "conversation-1" }]] },
      { reads: [[usage({ inputTokens: 300, outputTokens: 2 })]], outcome: lost },
      { reads: [[usage({ inputTokens: 900, outputTokens: 30 })]] },
    ]);
    await runTurn("turn-1");
    await runTurn("turn-2");
    expect(usageEvents(published).at(-1)).toMatchObject({ turnId: "turn-2", usage: { inputTokens: 1_200, outputTokens: 32 } });
    expect(session.info().usage).toEqual({ inputTokens: 1_200, outputTokens: 32 });
  });

  it("sends a bounded number of events for 10,000 reports in a turn, the last one with the final counts", async () => {
    const reports = Array.from({ length: 10_000 }, (_, index) => usage({ inputTokens: 5_000, outputTokens: index + 1, totalTokens: 5_001 + index }));
    // All in one read: the first goes at once, the rest is one update before the turn's end.
    const inOneRead = scriptedSession([{ reads: [reports] }]);
    await inOneRead.runTurn("turn-1");
    expect(usageEvents(inOneRead.published).map((event) => event.usage.outputTokens)).toEqual([1, 10_000]);

    // Spread over 200 reads: at most one update per window, whatever the machine's speed.
    const reads = Array.from({ length: 200 }, (_, index) => reports.slice(index * 50, index * 50 + 50));
    const spread = scriptedSession([{ reads }]);
    const started = performance.now();
    await spread.runTurn("turn-1");
    const elapsedMs = performance.now() - started;
    const updates = usageEvents(spread.published);
    expect(updates.length).toBeLessThanOrEqual(Math.ceil(elapsedMs / USAGE_UPDATE_WINDOW_MS) + 2);
    expect(updates.length).toBeLessThan(200);
    expect(updates.at(-1)).toMatchObject({ usage: { inputTokens: 5_000, outputTokens: 10_000, totalTokens: 15_000 } });
    expect(spread.published.length).toBe(updates.length + 4);
  });
});

describe("a session's token usage across Core restarts", () => {
  const ORIGIN = "https://app.example.com";
  const SESSION_ID = "session-usage-1";
  let root: string;

  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), "pedelec-session-usage-"));
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  /** One Core's session manager over the store file, its provider running `runs`. */
  function coreWith(runs: ScriptedRun[]) {
    // No login shell to ask for a PATH: the scripted provider needs none.
    const env = { ...process.env, PEDELEC_HOME: join(root, "home"), SHELL: "" };
    const paths = resolveCorePaths(env);
    const published: SessionEventEnvelope[] = [];
    const adapter = scriptedAdapter(runs);
    const store = SessionStore.open(paths.sessionStoreFile);
    const sessions = new SessionManager({
      paths,
      loadSettings: () => loadSettings(paths.settingsFile),
      providers: { get: (code) => (code === "claude" ? adapter : undefined), supportedCodes: () => ["claude"] },
      env,
      processLedger: new ProcessGroupLedger(join(paths.runDir, "provider-processes")),
      scriptRunner: () => Promise.reject(new PedelecError("DENO_UNAVAILABLE", "these sessions run no scripts")),
      publish: (envelope) => published.push(envelope),
      store,
    });
    const page = () => sessions.getForOrigin(SESSION_ID, ORIGIN);
    const runTurn = async (turnId: string): Promise<void> => {
      page().startTurn(turnId, "go");
      await expect.poll(() => turnOver(published, turnId)).toBe(true);
    };
    return { sessions, store, published, page, runTurn };
  }

  /** The session an earlier Core created: in the store, as createSession leaves it. */
  function storeSession(overrides: Parameters<typeof storedSession>[1] = {}): void {
    const store = SessionStore.open(resolveCorePaths({ PEDELEC_HOME: join(root, "home") }).sessionStoreFile);
    const now = new Date().toISOString();
    store.insertSession(
      storedSession(SESSION_ID, {
        origin: ORIGIN,
        provider: "claude",
        workspace: { path: root, managed: false },
        providerSessionId: null,
        status: "idle",
        activeTurn: null,
        usage: {},
        createdAt: now,
        lastActivityAt: now,
        ...overrides,
      }),
    );
    store.close();
  }

  it("keeps the total in the store, shows it to a resuming page at once after a restart, and goes on adding to it", async () => {
    storeSession();
    const first = coreWith([
      { reads: [[usage({ inputTokens: 1_000, outputTokens: 50 })]] },
      { reads: [[usage({ inputTokens: 2_000, outputTokens: 70, cachedInputTokens: 1_500 })]] },
    ]);
    await first.sessions.restore(first.store);
    await first.runTurn("turn-1");
    await first.runTurn("turn-2");
    const total = { inputTokens: 3_000, outputTokens: 120, cachedInputTokens: 1_500 };
    expect(first.page().info().usage).toEqual(total);
    await first.sessions.shutdown();

    const second = coreWith([{ reads: [[usage({ inputTokens: 400, outputTokens: 4 })]] }]);
    expect(second.store.get(SESSION_ID)?.usage).toEqual(total);
    await second.sessions.restore(second.store);
    // What resumeSession answers, before any event.
    expect(second.page().info().usage).toEqual(total);
    await second.runTurn("turn-3");
    expect(usageEvents(second.published)).toEqual([
      {
        type: "usage-updated",
        turnId: "turn-3",
        usage: { inputTokens: 400, outputTokens: 4 },
        sessionUsage: { inputTokens: 3_400, outputTokens: 124, cachedInputTokens: 1_500 },
      },
    ]);
    await second.page().end("requested");
    await second.sessions.shutdown();

    // An ended session's tombstone still answers its total, also after the next restart.
    const third = coreWith([]);
    await third.sessions.restore(third.store);
    expect(third.page().info()).toMatchObject({ status: "ended", usage: { inputTokens: 3_400, outputTokens: 124, cachedInputTokens: 1_500 } });
    await third.sessions.shutdown();
  });

  it("keeps the total of a session whose Core was killed during a turn", async () => {
    storeSession({
      status: "running",
      activeTurn: { turnId: "turn-7", turnKind: "user" },
      usage: { inputTokens: 5_000, outputTokens: 500 },
      lastSeq: 12,
    });
    const core = coreWith([{ reads: [[usage({ inputTokens: 100, outputTokens: 1 })]] }]);
    await core.sessions.restore(core.store);
    const failed: SessionEvent | undefined = core.published.find(({ event }) => event.type === "turn-failed")?.event;
    expect(failed).toMatchObject({ turnId: "turn-7", error: { code: "SESSION_ERROR" } });
    expect(core.page().info().usage).toEqual({ inputTokens: 5_000, outputTokens: 500 });
    await core.runTurn("turn-8");
    expect(usageEvents(core.published).at(-1)?.sessionUsage).toEqual({ inputTokens: 5_100, outputTokens: 501 });
    expect(core.store.get(SESSION_ID)?.usage).toEqual({ inputTokens: 5_100, outputTokens: 501 });
    await core.sessions.shutdown();
  });
});
