import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { storedSession } from "./testing/stored-session.js";
import { SESSION_STORE_APPLICATION_ID, SESSION_STORE_MIGRATIONS, SESSION_STORE_SCHEMA_VERSION } from "./session-store-migrations.js";
import { SessionStore } from "./session-store.js";
import { openSqliteDatabase, type SqliteDatabase } from "./sqlite-database.js";
import { chatDelta } from "./testing/stored-session.js";

let folder: string;
let file: string;

beforeEach(async () => {
  folder = await mkdtemp(join(tmpdir(), "pedelec-session-store-migrations-"));
  file = join(folder, "sessions.sqlite");
});
afterEach(async () => {
  await rm(folder, { recursive: true, force: true });
});

/** Runs SQL on the file through a connection of its own, outside the store. */
function withRawFile<Result>(work: (database: SqliteDatabase) => Result): Result {
  const database = openSqliteDatabase(file);
  try {
    return work(database);
  } finally {
    database.close();
  }
}

/** The layout of schema version 1 as it was released, with one session and two events (written by hand, frozen). */
function writeVersionOneFile(): void {
  withRawFile((database) => {
    database.exec(`
      PRAGMA journal_mode = WAL;
      PRAGMA application_id = ${SESSION_STORE_APPLICATION_ID};
      CREATE TABLE sessions (
        session_id TEXT PRIMARY KEY NOT NULL, origin TEXT NOT NULL, provider TEXT NOT NULL, model TEXT,
        effort_level TEXT NOT NULL, access TEXT NOT NULL, auto_end_on_disconnect INTEGER NOT NULL,
        workspace_path TEXT NOT NULL, workspace_managed INTEGER NOT NULL, executable_path TEXT NOT NULL,
        provider_session_id TEXT, status TEXT NOT NULL, created_at TEXT NOT NULL, last_activity_at TEXT NOT NULL,
        ended_at TEXT, end_reason TEXT, last_seq INTEGER NOT NULL
      ) STRICT;
      CREATE INDEX sessions_by_ended_at ON sessions (ended_at) WHERE ended_at IS NOT NULL;
      CREATE TABLE session_setups (
        session_id TEXT PRIMARY KEY NOT NULL, effort_argv TEXT NOT NULL, guidance TEXT NOT NULL, tools TEXT NOT NULL
      ) STRICT;
      CREATE TABLE session_events (
        session_id TEXT NOT NULL, seq INTEGER NOT NULL, envelope TEXT NOT NULL, PRIMARY KEY (session_id, seq)
      ) STRICT, WITHOUT ROWID;
      INSERT INTO sessions VALUES (
        'session-from-v1', 'https://app.example.com', 'codex', NULL, 'medium', 'sandbox', 1, '/srv/w', 0,
        '/usr/bin/codex', 'conversation-1', 'running', '2025-01-01T00:00:00.000Z', '2025-01-01T00:01:00.000Z',
        NULL, NULL, 2
      );
      INSERT INTO session_setups VALUES ('session-from-v1', '["-c","x=1"]', 'guide', '[]');
      PRAGMA user_version = 1;
    `);
    const insert = database.prepare("INSERT INTO session_events VALUES (?, ?, ?)");
    for (const seq of [1, 2]) insert.run("session-from-v1", seq, JSON.stringify(chatDelta("session-from-v1", seq)));
  });
}

function schemaVersion(): number {
  return withRawFile((database) => database.pragma("user_version", { simple: true }) as number);
}

describe("session store migrations", () => {
  it("numbers its steps 1, 2, … so the version a file records says which have run", () => {
    expect(SESSION_STORE_MIGRATIONS.map((migration) => migration.version)).toEqual(
      Array.from({ length: SESSION_STORE_SCHEMA_VERSION }, (_, index) => index + 1),
    );
    expect(SESSION_STORE_SCHEMA_VERSION).toBe(4);
  });

  it("brings a version 1 file up to date and keeps its sessions and events", () => {
    writeVersionOneFile();
    const store = SessionStore.open(file);
    try {
      expect(store.get("session-from-v1")).toEqual({
        sessionId: "session-from-v1",
        origin: "https://app.example.com",
        provider: "codex",
        model: null,
        effortLevel: "medium",
        effort: null,
        effortArgv: ["-c", "x=1"],
        access: "sandbox",
        autoEndOnDisconnect: true,
        workspace: { path: "/srv/w", managed: false },
        guidance: "guide",
        tools: [],
        executablePath: "/usr/bin/codex",
        providerSessionId: "conversation-1",
        status: "running",
        activeTurn: null,
        usage: {},
        createdAt: "2025-01-01T00:00:00.000Z",
        lastActivityAt: "2025-01-01T00:01:00.000Z",
        endedAt: null,
        endReason: null,
        lastSeq: 2,
      });
      expect(store.eventsAfter("session-from-v1", 0)).toEqual([chatDelta("session-from-v1", 1), chatDelta("session-from-v1", 2)]);
      // The columns version 2 added work.
      store.appendEvent(chatDelta("session-from-v1", 3), { activeTurn: { turnId: "turn-3", turnKind: "user" } });
      expect(store.get("session-from-v1")).toMatchObject({ lastSeq: 3, activeTurn: { turnId: "turn-3", turnKind: "user" } });
      // And those version 3 added.
      store.updateSession("session-from-v1", { usage: { inputTokens: 900, outputTokens: 12 } });
      expect(store.get("session-from-v1")?.usage).toEqual({ inputTokens: 900, outputTokens: 12 });
      // And version 4's: a session with an explicit effort beside the profile session from version 1.
      store.insertSession(
        storedSession("session-explicit", { effortLevel: null, effort: "xhigh", effortArgv: ["-c", "model_reasoning_effort=xhigh"] }),
      );
      expect(store.get("session-explicit")).toMatchObject({ effortLevel: null, effort: "xhigh" });
      expect(store.get("session-from-v1")).toMatchObject({ effortLevel: "medium", effort: null });
    } finally {
      store.close();
    }
    expect(schemaVersion()).toBe(4);
  });

  it("sets up an empty file, in WAL mode and marked as Pedelec's", async () => {
    await writeFile(file, "");
    SessionStore.open(file).close();
    withRawFile((database) => {
      expect(database.pragma("user_version", { simple: true })).toBe(SESSION_STORE_SCHEMA_VERSION);
      expect(database.pragma("application_id", { simple: true })).toBe(SESSION_STORE_APPLICATION_ID);
      expect(database.pragma("journal_mode", { simple: true })).toBe("wal");
    });
  });

  it("refuses a file written by a newer Pedelec and leaves it byte for byte as it was", async () => {
    withRawFile((database) => {
      database.exec(`PRAGMA application_id = ${SESSION_STORE_APPLICATION_ID}; CREATE TABLE sessions (anything TEXT); PRAGMA user_version = 5;`);
    });
    const before = await readFile(file);
    expect(() => SessionStore.open(file)).toThrow(
      expect.objectContaining({
        code: "SESSION_STORE_FAILED",
        message: `session store ${file} was written by a newer Pedelec (schema version 5; this one knows up to 4); it was left as it is`,
      }),
    );
    expect((await readFile(file)).equals(before)).toBe(true);
    expect(schemaVersion()).toBe(5);
  });

  it("refuses a database that belongs to another program and leaves it alone", async () => {
    withRawFile((database) => database.exec("PRAGMA application_id = 1234; CREATE TABLE sessions (anything TEXT);"));
    const foreign = await readFile(file);
    expect(() => SessionStore.open(file)).toThrow(
      expect.objectContaining({ code: "SESSION_STORE_FAILED", message: expect.stringContaining("belongs to another program") }),
    );
    expect((await readFile(file)).equals(foreign)).toBe(true);

    await rm(file);
    withRawFile((database) => database.exec("CREATE TABLE notes (text TEXT);"));
    const unmarked = await readFile(file);
    expect(() => SessionStore.open(file)).toThrow(
      expect.objectContaining({ code: "SESSION_STORE_FAILED", message: expect.stringContaining("holds tables Pedelec did not create") }),
    );
    expect((await readFile(file)).equals(unmarked)).toBe(true);
  });

  it("runs every missing step or none: a failing step leaves the file at its old version", () => {
    writeVersionOneFile();
    // A column named like the one step 2 adds makes that step fail half-way.
    withRawFile((database) => database.exec("ALTER TABLE sessions ADD COLUMN active_turn_kind TEXT"));
    expect(() => SessionStore.open(file)).toThrow(
      expect.objectContaining({
        code: "SESSION_STORE_FAILED",
        message: expect.stringMatching(
          /could not be brought to schema version 2 \(the turn a session is running\): duplicate column.*left at version 1$/,
        ),
      }),
    );
    expect(schemaVersion()).toBe(1);
    withRawFile((database) => {
      const columns = database.prepare<[], string>("SELECT name FROM pragma_table_info('sessions')").pluck().all();
      expect(columns).not.toContain("active_turn_id");
    });
  });
});

// Keeps the fixture honest: the hand-written version 1 layout is what step 1 creates.
describe("the version 1 fixture", () => {
  it("matches what step 1 creates", () => {
    const fromSteps = openSqliteDatabase(":memory:");
    const stepOne = SESSION_STORE_MIGRATIONS[0];
    if (stepOne === undefined) throw new Error("no step 1");
    stepOne.apply(fromSteps);
    writeVersionOneFile();
    const schemaOf = (database: SqliteDatabase): string[] =>
      database
        .prepare<[], string>("SELECT name || ':' || replace(replace(sql, char(10), ''), ' ', '') FROM sqlite_schema ORDER BY name")
        .pluck()
        .all();
    const fixture = openSqliteDatabase(file);
    try {
      expect(schemaOf(fixture)).toEqual(schemaOf(fromSteps));
    } finally {
      fixture.close();
      fromSteps.close();
    }
  });
});
