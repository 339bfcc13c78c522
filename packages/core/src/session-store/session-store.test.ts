import { mkdtemp, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SessionStore, type StoredSession } from "./session-store.js";
import { openSqliteDatabase } from "./sqlite-database.js";
import { chatDelta, storedSession } from "./testing/stored-session.js";

let folder: string;
let file: string;
const opened: SessionStore[] = [];

beforeEach(async () => {
  folder = await mkdtemp(join(tmpdir(), "pedelec-session-store-"));
  file = join(folder, "state", "sessions.sqlite");
});
afterEach(async () => {
  for (const store of opened.splice(0)) store.close();
  await rm(folder, { recursive: true, force: true });
});

function open(options?: Parameters<typeof SessionStore.open>[1]): SessionStore {
  const store = SessionStore.open(file, options);
  opened.push(store);
  return store;
}

function seqs(store: SessionStore, sessionId: string, afterSeq = 0): number[] {
  return store.eventsAfter(sessionId, afterSeq).map((envelope) => envelope.seq);
}

function range(first: number, last: number): number[] {
  return Array.from({ length: last - first + 1 }, (_, index) => first + index);
}

/** Event rows physically in the file, kept window or not. */
function eventRows(sessionId: string): number {
  const database = openSqliteDatabase(file, { readonly: true });
  try {
    return database.prepare<[string], number>("SELECT count(*) FROM session_events WHERE session_id = ?").pluck().get(sessionId) ?? -1;
  } finally {
    database.close();
  }
}

describe("SessionStore: sessions", () => {
  it("gives back every field as it was stored, after the file is closed and opened again", () => {
    const live = storedSession("session-live-1");
    const ended = storedSession("session-ended-1", {
      provider: "ollama",
      model: "gpt-oss:20b",
      effortLevel: null,
      effort: "medium",
      effortArgv: ["--think", "medium"],
      access: "sandbox",
      autoEndOnDisconnect: true,
      workspace: { path: "/home/someone/.pedelec/workspaces/session-ended-1", managed: true },
      tools: [],
      providerSessionId: null,
      status: "ended",
      activeTurn: null,
      endedAt: "2025-03-01T12:00:00.000Z",
      endReason: "disconnected",
      lastSeq: 42,
    });
    const first = open();
    first.insertSession(live);
    first.insertSession(ended);
    first.close();

    const second = open();
    expect(second.get(live.sessionId)).toEqual(live);
    expect(second.get(ended.sessionId)).toEqual(ended);
    expect(second.get("session-unknown")).toBeUndefined();
    expect(second.listOpen()).toEqual([live]);
    expect(second.listEnded()).toEqual([ended]);
  });

  it("changes only the fields a patch names, and each field on its own", () => {
    const store = open();
    const session = storedSession("session-patch-1");
    store.insertSession(session);
    const patches: Partial<StoredSession>[] = [
      { origin: "https://other.example.com" },
      { provider: "codex", model: null },
      { effortLevel: "medium", effortArgv: ["-c", "model_reasoning_effort=medium"] },
      { access: "sandbox", autoEndOnDisconnect: true },
      { workspace: { path: "/tmp/elsewhere", managed: true } },
      { guidance: "", tools: [] },
      { executablePath: "/opt/codex/bin/codex", providerSessionId: null },
      { status: "running", activeTurn: { turnId: "turn-9", turnKind: "user" } },
      { activeTurn: null, status: "error" },
      { usage: { inputTokens: 60_000, outputTokens: 2_000 } },
      { usage: {} },
      { createdAt: "2025-01-01T00:00:00.000Z", lastActivityAt: "2025-01-02T00:00:00.000Z", lastSeq: 17 },
      { endedAt: "2025-01-03T00:00:00.000Z", endReason: "requested" },
    ];
    let expected = session;
    for (const patch of patches) {
      store.updateSession(session.sessionId, patch);
      expected = { ...expected, ...patch };
      expect(store.get(session.sessionId)).toEqual(expected);
    }
    // A field present but undefined is not a change.
    store.updateSession(session.sessionId, { status: undefined, model: undefined });
    expect(store.get(session.sessionId)).toEqual(expected);
  });

  it("refuses a second insert of an id and updates of an unknown id", () => {
    const store = open();
    store.insertSession(storedSession("session-twice-1"));
    expect(() => store.insertSession(storedSession("session-twice-1", { origin: "https://evil.example.com" }))).toThrow(
      expect.objectContaining({ code: "SESSION_STORE_FAILED", message: expect.stringContaining("session-twice-1 is stored already") }),
    );
    expect(store.get("session-twice-1")?.origin).toBe("https://app.example.com");
    expect(() => store.updateSession("session-missing", { status: "idle" })).toThrow(expect.objectContaining({ code: "SESSION_STORE_FAILED" }));
    expect(() => store.markEnded("session-missing", "requested", "2025-03-01T12:00:00.000Z")).toThrow(
      expect.objectContaining({ code: "SESSION_STORE_FAILED" }),
    );
    expect(() => store.appendEvent(chatDelta("session-missing", 1))).toThrow(expect.objectContaining({ code: "SESSION_STORE_FAILED" }));
  });

  it("lists open sessions oldest first and ended ones in the order they ended", () => {
    const store = open();
    store.insertSession(storedSession("session-b-open", { createdAt: "2025-03-01T10:00:02.000Z" }));
    store.insertSession(storedSession("session-a-open", { createdAt: "2025-03-01T10:00:01.000Z" }));
    store.insertSession(storedSession("session-c-ends", { createdAt: "2025-03-01T10:00:00.000Z" }));
    store.insertSession(storedSession("session-d-ends", { createdAt: "2025-03-01T09:00:00.000Z" }));
    store.markEnded("session-d-ends", "requested", "2025-03-01T11:00:01.000Z");
    store.markEnded("session-c-ends", "shutdown", "2025-03-01T11:00:00.000Z");
    expect(store.listOpen().map((session) => session.sessionId)).toEqual(["session-a-open", "session-b-open"]);
    expect(store.listEnded().map((session) => session.sessionId)).toEqual(["session-c-ends", "session-d-ends"]);
  });

  it("creates its folder 0700 and its files 0600", async () => {
    const store = open();
    store.insertSession(storedSession("session-modes-1"));
    expect((await stat(join(folder, "state"))).mode & 0o777).toBe(0o700);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    // SQLite gives the write-ahead log and its index the database file's mode.
    expect((await stat(`${file}-wal`)).mode & 0o777).toBe(0o600);
    expect((await stat(`${file}-shm`)).mode & 0o777).toBe(0o600);
  });

  it("fails every call once closed, and closing twice is harmless", () => {
    const store = open();
    store.close();
    store.close();
    expect(() => store.get("session-closed-1")).toThrow(
      expect.objectContaining({ code: "SESSION_STORE_FAILED", message: expect.stringContaining(`${file}: it is closed`) }),
    );
    expect(() => store.appendEvent(chatDelta("session-closed-1", 1))).toThrow(expect.objectContaining({ code: "SESSION_STORE_FAILED" }));
  });
});

describe("SessionStore: events", () => {
  it("appends events with the session's row in one step and replays them in seq order", () => {
    const store = open();
    store.insertSession(storedSession("session-events-1", { status: "idle", activeTurn: null }));
    store.insertSession(storedSession("session-events-2"));
    for (let seq = 1; seq <= 20; seq += 1) {
      store.appendEvent(
        chatDelta("session-events-1", seq),
        seq === 1 ? { status: "running", activeTurn: { turnId: "turn-3", turnKind: "user" } } : undefined,
      );
      store.appendEvent(chatDelta("session-events-2", seq, `other ${seq}`));
    }
    store.appendEvent(chatDelta("session-events-1", 21), { status: "idle", activeTurn: null, providerSessionId: "conversation-8" });

    expect(store.eventsAfter("session-events-1", 0)).toEqual(range(1, 21).map((seq) => chatDelta("session-events-1", seq)));
    expect(seqs(store, "session-events-1", 15)).toEqual(range(16, 21));
    expect(seqs(store, "session-events-1", 21)).toEqual([]);
    expect(seqs(store, "session-unknown")).toEqual([]);
    expect(store.get("session-events-1")).toMatchObject({
      lastSeq: 21,
      lastActivityAt: chatDelta("session-events-1", 21).emittedAt,
      status: "idle",
      activeTurn: null,
      providerSessionId: "conversation-8",
    });
    expect(store.get("session-events-2")).toMatchObject({ lastSeq: 20, status: "waiting_tool_result" });
  });

  it("refuses an event that is not newer than the stored seq and changes nothing", () => {
    const store = open();
    store.insertSession(storedSession("session-replayed-1"));
    store.appendEvent(chatDelta("session-replayed-1", 1));
    store.appendEvent(chatDelta("session-replayed-1", 2));
    const before = store.get("session-replayed-1");
    expect(() => store.appendEvent(chatDelta("session-replayed-1", 2, "again"), { status: "error" })).toThrow(
      expect.objectContaining({ code: "SESSION_STORE_FAILED", message: expect.stringContaining("not newer than the stored seq 2") }),
    );
    expect(() => store.appendEvent(chatDelta("session-replayed-1", 1), { status: "error" })).toThrow(
      expect.objectContaining({ code: "SESSION_STORE_FAILED" }),
    );
    expect(store.get("session-replayed-1")).toEqual(before);
    expect(store.eventsAfter("session-replayed-1", 0)).toEqual([chatDelta("session-replayed-1", 1), chatDelta("session-replayed-1", 2)]);
  });

  it("keeps only the newest eventLimitPerSession events, deleting older rows every 256 appends", () => {
    const store = open({ eventLimitPerSession: 100 });
    store.insertSession(storedSession("session-window-1"));
    for (let seq = 1; seq <= 1_000; seq += 1) store.appendEvent(chatDelta("session-window-1", seq));

    expect(seqs(store, "session-window-1")).toEqual(range(901, 1_000));
    expect(seqs(store, "session-window-1", 950)).toEqual(range(951, 1_000));
    // The last delete ran at seq 768 and removed everything up to 668.
    expect(eventRows("session-window-1")).toBe(1_000 - 668);
    store.close();

    // Opening with a smaller limit trims at once.
    const smaller = open({ eventLimitPerSession: 50 });
    expect(eventRows("session-window-1")).toBe(50);
    expect(seqs(smaller, "session-window-1")).toEqual(range(951, 1_000));
  });

  it("drops a session's events when it ends and keeps only its row; later events move lastSeq only", () => {
    const store = open();
    store.insertSession(storedSession("session-ending-1"));
    for (let seq = 1; seq <= 10; seq += 1) store.appendEvent(chatDelta("session-ending-1", seq));
    store.markEnded("session-ending-1", "requested", "2025-03-01T12:00:00.000Z");

    expect(store.get("session-ending-1")).toMatchObject({
      status: "ended",
      activeTurn: null,
      endedAt: "2025-03-01T12:00:00.000Z",
      endReason: "requested",
      lastSeq: 10,
    });
    expect(store.eventsAfter("session-ending-1", 0)).toEqual([]);
    expect(store.listOpen()).toEqual([]);

    store.appendEvent(chatDelta("session-ending-1", 11));
    expect(store.get("session-ending-1")?.lastSeq).toBe(11);
    expect(store.eventsAfter("session-ending-1", 0)).toEqual([]);
    store.close();
    expect(eventRows("session-ending-1")).toBe(0);
  });
});

describe("SessionStore.pruneEnded", () => {
  function endedAt(minute: number): string {
    return new Date(Date.UTC(2025, 2, 1, 12, minute)).toISOString();
  }

  it("deletes ended sessions beyond the newest `keep` or ended before the cut-off, and never an open one", () => {
    const store = open();
    store.insertSession(storedSession("session-open-old", { createdAt: "2020-01-01T00:00:00.000Z" }));
    for (let minute = 1; minute <= 6; minute += 1) {
      store.insertSession(storedSession(`session-ended-${minute}`));
      store.markEnded(`session-ended-${minute}`, "requested", endedAt(minute));
    }

    expect(store.pruneEnded(4, endedAt(0))).toEqual(["session-ended-1", "session-ended-2"]);
    expect(store.pruneEnded(4, endedAt(0))).toEqual([]);
    expect(store.pruneEnded(10, endedAt(5))).toEqual(["session-ended-3", "session-ended-4"]);
    expect(store.listEnded().map((session) => session.sessionId)).toEqual(["session-ended-5", "session-ended-6"]);
    expect(store.pruneEnded(0, endedAt(0))).toEqual(["session-ended-5", "session-ended-6"]);
    expect(store.listEnded()).toEqual([]);
    expect(store.listOpen().map((session) => session.sessionId)).toEqual(["session-open-old"]);
  });
});
