import { closeSync, mkdirSync, openSync } from "node:fs";
import { dirname } from "node:path";
import type { AccessMode, EffortLevel, ExplicitEffort, ProviderCode, SessionStatus, TurnKind } from "@pedelec/protocol/domain";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import type { SessionEventEnvelope } from "@pedelec/protocol/session-events";
import type { TokenUsage } from "@pedelec/protocol/token-usage";
import type { ToolManifestEntry } from "@pedelec/protocol/tool-schema";
import { SESSION_STORE_APPLICATION_ID, SESSION_STORE_MIGRATIONS, SESSION_STORE_SCHEMA_VERSION } from "./session-store-migrations.js";
import { openSqliteDatabase, type SqliteDatabase, type SqliteStatement, type SqliteTransaction } from "./sqlite-database.js";

/** Everything Core needs to bring a session back after a restart, and what it reports about an ended one. */
export interface StoredSession {
  sessionId: string;
  /** The page origin that owns the session. */
  origin: string;
  provider: ProviderCode;
  model: string | null;
  /** The effort profile the session runs with; null when it runs with an explicit effort. Exactly one is set. */
  effortLevel: EffortLevel | null;
  /** The explicit effort the page named with its model; null for a session on an effort profile. */
  effort: ExplicitEffort | null;
  /** The effort profile's (or explicit effort's) argv as it was snapshotted when the session was created. */
  effortArgv: string[];
  access: AccessMode;
  autoEndOnDisconnect: boolean;
  workspace: { path: string; managed: boolean };
  guidance: string;
  /** The tool manifest the page sent with createSession. */
  tools: ToolManifestEntry[];
  /** The provider executable the session was created with. */
  executablePath: string;
  /** The provider's conversation id, so the next turn resumes it. */
  providerSessionId: string | null;
  /** The last status Core emitted. */
  status: SessionStatus;
  /** The turn running when this was last written; null between turns. */
  activeTurn: { turnId: string; turnKind: TurnKind } | null;
  /** The tokens the session used over all its turns, as its last usage update said; `{}` before any. */
  usage: TokenUsage;
  /** ISO 8601, as `Date.prototype.toISOString` writes it (times are compared as text). */
  createdAt: string;
  lastActivityAt: string;
  endedAt: string | null;
  endReason: string | null;
  /** The seq of the newest event appended; 0 before the first. */
  lastSeq: number;
}

export type StoredSessionPatch = Partial<Omit<StoredSession, "sessionId">>;

export interface SessionStoreOptions {
  /** How many of a session's newest events are kept for replay. Default 5,000. */
  eventLimitPerSession?: number;
  /** How long to wait for a lock another process holds before failing. Default 2,000 ms. */
  busyTimeoutMs?: number;
}

export const DEFAULT_EVENT_LIMIT_PER_SESSION = 5_000;
export const DEFAULT_BUSY_TIMEOUT_MS = 2_000;
/** Events beyond the window are deleted when an append crosses a multiple of this seq: once per that many appends. */
const PRUNE_EVERY_SEQ = 256;

type SqlValue = string | number | null;
type ColumnValues = Record<string, SqlValue>;

/** How each field is written; one field may span several columns. */
const FIELD_COLUMNS = {
  origin: (value) => ({ origin: value }),
  provider: (value) => ({ provider: value }),
  model: (value) => ({ model: value }),
  // One column holds the level, and effort_explicit says whose: a profile's (0) or an explicit effort's (1).
  effortLevel: (value): ColumnValues => (value === null ? {} : { effort_level: value, effort_explicit: 0 }),
  effort: (value): ColumnValues => (value === null ? {} : { effort_level: value, effort_explicit: 1 }),
  effortArgv: (value) => ({ effort_argv: JSON.stringify(value) }),
  access: (value) => ({ access: value }),
  autoEndOnDisconnect: (value) => ({ auto_end_on_disconnect: value ? 1 : 0 }),
  workspace: (value) => ({ workspace_path: value.path, workspace_managed: value.managed ? 1 : 0 }),
  guidance: (value) => ({ guidance: value }),
  tools: (value) => ({ tools: JSON.stringify(value) }),
  executablePath: (value) => ({ executable_path: value }),
  providerSessionId: (value) => ({ provider_session_id: value }),
  status: (value) => ({ status: value }),
  activeTurn: (value) => ({ active_turn_id: value?.turnId ?? null, active_turn_kind: value?.turnKind ?? null }),
  usage: (value) => ({
    usage_input_tokens: value.inputTokens ?? null,
    usage_output_tokens: value.outputTokens ?? null,
    usage_cached_input_tokens: value.cachedInputTokens ?? null,
    usage_total_tokens: value.totalTokens ?? null,
  }),
  createdAt: (value) => ({ created_at: value }),
  lastActivityAt: (value) => ({ last_activity_at: value }),
  endedAt: (value) => ({ ended_at: value }),
  endReason: (value) => ({ end_reason: value }),
  lastSeq: (value) => ({ last_seq: value }),
} satisfies { [Field in keyof StoredSessionPatch]-?: (value: StoredSession[Field]) => ColumnValues };

interface SessionRow {
  session_id: string;
  origin: string;
  provider: string;
  model: string | null;
  effort_level: string;
  /** 1: effort_level is an explicit effort, 0: an effort profile's level. */
  effort_explicit: number;
  access: string;
  auto_end_on_disconnect: number;
  workspace_path: string;
  workspace_managed: number;
  executable_path: string;
  provider_session_id: string | null;
  status: string;
  active_turn_id: string | null;
  active_turn_kind: string | null;
  /** Null: the provider never reported that count. */
  usage_input_tokens: number | null;
  usage_output_tokens: number | null;
  usage_cached_input_tokens: number | null;
  usage_total_tokens: number | null;
  created_at: string;
  last_activity_at: string;
  ended_at: string | null;
  end_reason: string | null;
  last_seq: number;
  /** From `session_setups`. */
  effort_argv: string;
  guidance: string;
  tools: string;
}

/** Columns of `session_setups`; every other column is in `sessions`. */
const SETUP_COLUMNS: ReadonlySet<string> = new Set(["effort_argv", "guidance", "tools"]);

function columnsOf(patch: StoredSessionPatch): ColumnValues {
  const columns: ColumnValues = {};
  for (const [field, value] of Object.entries(patch)) {
    if (value === undefined || !(field in FIELD_COLUMNS)) continue;
    const write = FIELD_COLUMNS[field as keyof typeof FIELD_COLUMNS] as (value: unknown) => ColumnValues;
    Object.assign(columns, write(value));
  }
  return columns;
}

/** Splits columns between the two tables a session spans; both are always listed, in a fixed order. */
function byTable(columns: ColumnValues): [table: "sessions" | "session_setups", columns: ColumnValues][] {
  const state: ColumnValues = {};
  const setup: ColumnValues = {};
  for (const [name, value] of Object.entries(columns)) (SETUP_COLUMNS.has(name) ? setup : state)[name] = value;
  return [
    ["sessions", state],
    ["session_setups", setup],
  ];
}

function sessionOf(row: SessionRow): StoredSession {
  return {
    sessionId: row.session_id,
    origin: row.origin,
    provider: row.provider as ProviderCode,
    model: row.model,
    effortLevel: row.effort_explicit === 1 ? null : (row.effort_level as EffortLevel),
    effort: row.effort_explicit === 1 ? (row.effort_level as ExplicitEffort) : null,
    effortArgv: JSON.parse(row.effort_argv) as string[],
    access: row.access as AccessMode,
    autoEndOnDisconnect: row.auto_end_on_disconnect === 1,
    workspace: { path: row.workspace_path, managed: row.workspace_managed === 1 },
    guidance: row.guidance,
    tools: JSON.parse(row.tools) as ToolManifestEntry[],
    executablePath: row.executable_path,
    providerSessionId: row.provider_session_id,
    status: row.status as SessionStatus,
    activeTurn:
      row.active_turn_id === null || row.active_turn_kind === null
        ? null
        : { turnId: row.active_turn_id, turnKind: row.active_turn_kind as TurnKind },
    usage: usageOf(row),
    createdAt: row.created_at,
    lastActivityAt: row.last_activity_at,
    endedAt: row.ended_at,
    endReason: row.end_reason,
    lastSeq: row.last_seq,
  };
}

function usageOf(row: SessionRow): TokenUsage {
  const usage: TokenUsage = {};
  if (row.usage_input_tokens !== null) usage.inputTokens = row.usage_input_tokens;
  if (row.usage_output_tokens !== null) usage.outputTokens = row.usage_output_tokens;
  if (row.usage_cached_input_tokens !== null) usage.cachedInputTokens = row.usage_cached_input_tokens;
  if (row.usage_total_tokens !== null) usage.totalTokens = row.usage_total_tokens;
  return usage;
}

/**
 * Core's durable record of its sessions: one row per session and a bounded log of each open session's newest events,
 * in one SQLite file, reached through `openSqliteDatabase` (Node's `node:sqlite` where it has one, better-sqlite3
 * otherwise). Every method is synchronous and each write is one transaction, so a crash at any point leaves
 * the file as it was after some complete write. Every failure is a `SESSION_STORE_FAILED` PedelecError naming the file.
 *
 * @example
 * ```ts
 * const store = SessionStore.open(join(home, "state", "sessions.sqlite"));
 * store.insertSession(session);
 * store.appendEvent(envelope, { status: "running" });
 * const missed = store.eventsAfter(session.sessionId, lastSeqTheClientSaw);
 * ```
 */
export class SessionStore {
  readonly #database: SqliteDatabase;
  readonly #eventLimit: number;
  readonly #writes = new Map<string, SqliteStatement<[ColumnValues], unknown>>();
  readonly #statements: ReturnType<typeof prepareStatements>;
  // Writes run as BEGIN IMMEDIATE: a deferred transaction that reads first and then finds the write lock taken fails at
  // once, without waiting out the busy timeout.
  readonly #insertSession: SqliteTransaction<(session: StoredSession) => void>;
  readonly #updateSession: SqliteTransaction<(sessionId: string, patch: StoredSessionPatch) => void>;
  readonly #appendEvent: SqliteTransaction<(envelope: SessionEventEnvelope, patch: StoredSessionPatch) => void>;
  readonly #markEnded: SqliteTransaction<(sessionId: string, reason: string, endedAt: string) => void>;
  readonly #pruneEnded: SqliteTransaction<(keep: number, endedBefore: string) => string[]>;

  private constructor(
    database: SqliteDatabase,
    /** The SQLite file, as given to `open`. */
    readonly file: string,
    eventLimit: number,
  ) {
    this.#database = database;
    this.#eventLimit = eventLimit;
    const statements = prepareStatements(database);
    this.#statements = statements;

    this.#insertSession = database.transaction((session: StoredSession) => {
      if (statements.sessionState.get(session.sessionId) !== undefined) {
        throw new PedelecError("SESSION_STORE_FAILED", `session ${session.sessionId} is stored already`);
      }
      for (const [table, columns] of byTable(columnsOf(session))) {
        const row = { session_id: session.sessionId, ...columns };
        const names = Object.keys(row);
        this.#prepared(`INSERT INTO ${table} (${names.join(", ")}) VALUES (${names.map((name) => `@${name}`).join(", ")})`).run(row);
      }
    });

    this.#updateSession = database.transaction((sessionId: string, patch: StoredSessionPatch) => {
      if (!this.#update(sessionId, patch)) throw this.#noSession(sessionId);
    });

    this.#appendEvent = database.transaction((envelope: SessionEventEnvelope, patch: StoredSessionPatch) => {
      const { sessionId, seq } = envelope;
      const state = statements.sessionState.get(sessionId);
      if (state === undefined) throw this.#noSession(sessionId);
      if (seq <= state.last_seq) {
        throw new PedelecError("SESSION_STORE_FAILED", `event ${seq} of session ${sessionId} is not newer than the stored seq ${state.last_seq}`);
      }
      // An ended session keeps only its row; its late events still move lastSeq on.
      if (state.ended_at === null) statements.insertEvent.run(sessionId, seq, JSON.stringify(envelope));
      this.#update(sessionId, { lastActivityAt: envelope.emittedAt, ...patch, lastSeq: seq });
      if (Math.floor(seq / PRUNE_EVERY_SEQ) > Math.floor(state.last_seq / PRUNE_EVERY_SEQ)) {
        statements.dropEventsUpTo.run(sessionId, seq - this.#eventLimit);
      }
    });

    this.#markEnded = database.transaction((sessionId: string, reason: string, endedAt: string) => {
      const changed = this.#update(sessionId, { endedAt, endReason: reason, status: "ended", activeTurn: null });
      if (!changed) throw this.#noSession(sessionId);
      statements.deleteEvents.run(sessionId);
    });

    this.#pruneEnded = database.transaction((keep: number, endedBefore: string) => {
      const ids = statements.endedToPrune.all({ keep, ended_before: endedBefore });
      for (const id of ids) {
        statements.deleteEvents.run(id);
        statements.deleteSetup.run(id);
        statements.deleteSession.run(id);
      }
      return ids;
    });
  }

  /**
   * Opens the store at `file`, creating it (and its folder, 0700; the file 0600) when missing and bringing an older
   * schema up to date. Throws `SESSION_STORE_FAILED` when the file is corrupt, not a session store, written by a
   * newer Pedelec, locked by another process or not writable; such a file is never deleted or rewritten.
   */
  static open(file: string, options: SessionStoreOptions = {}): SessionStore {
    const eventLimit = options.eventLimitPerSession ?? DEFAULT_EVENT_LIMIT_PER_SESSION;
    const busyTimeoutMs = options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS;
    if (!Number.isSafeInteger(eventLimit) || eventLimit < 1) {
      throw new RangeError(`eventLimitPerSession must be a positive integer, not ${eventLimit}`);
    }
    if (!Number.isSafeInteger(busyTimeoutMs) || busyTimeoutMs < 0) {
      throw new RangeError(`busyTimeoutMs must be a non-negative integer, not ${busyTimeoutMs}`);
    }

    let database: SqliteDatabase | undefined;
    try {
      createPrivateFile(file);
      database = openSqliteDatabase(file, { busyTimeoutMs });
      // Everything up to the migration only reads, so a file that is refused is left byte for byte as it was.
      checkReadable(database, file);
      const journalMode: unknown = database.pragma("journal_mode = WAL", { simple: true });
      if (journalMode !== "wal") {
        throw new PedelecError("SESSION_STORE_FAILED", `session store ${file} could not switch to WAL mode (it is in ${String(journalMode)} mode)`);
      }
      // In WAL mode, NORMAL syncs at checkpoints rather than at every commit: a committed transaction survives the
      // process crashing (the case that matters, as Core may be killed), while losing power may lose the last ones.
      database.pragma("synchronous = NORMAL");
      migrate(database, file);
      // The limit may be lower than when the file was last written.
      database
        .prepare("DELETE FROM session_events WHERE seq <= (SELECT last_seq FROM sessions WHERE sessions.session_id = session_events.session_id) - ?")
        .run(eventLimit);
      return new SessionStore(database, file, eventLimit);
    } catch (error) {
      database?.close();
      throw storeFailure(file, "open", error);
    }
  }

  /** Stores a new session; its id must not be stored already. */
  insertSession(session: StoredSession): void {
    this.#guard("insert a session into", () => this.#insertSession.immediate(session));
  }

  /** Changes the given fields of a stored session. */
  updateSession(sessionId: string, patch: StoredSessionPatch): void {
    this.#guard("update a session in", () => this.#updateSession.immediate(sessionId, patch));
  }

  /**
   * Appends one event and, in the same transaction, sets the session's `lastSeq` to its seq, `lastActivityAt` to its
   * `emittedAt` and whatever `sessionPatch` holds (status, activeTurn, providerSessionId…). The seq must be newer than
   * the stored `lastSeq`. An ended session keeps no events: its row is updated, the event is not kept.
   */
  appendEvent(envelope: SessionEventEnvelope, sessionPatch: StoredSessionPatch = {}): void {
    this.#guard("append an event to", () => this.#appendEvent.immediate(envelope, sessionPatch));
  }

  /** The kept events of a session with a seq above `afterSeq`, oldest first: at most the newest `eventLimitPerSession`. */
  eventsAfter(sessionId: string, afterSeq: number): SessionEventEnvelope[] {
    return this.#guard("read events from", () =>
      this.#statements.eventsAfter
        .all({ session_id: sessionId, after_seq: afterSeq, limit: this.#eventLimit })
        .map((envelope) => JSON.parse(envelope) as SessionEventEnvelope),
    );
  }

  /** Whether a turn with this id started in the session, as far as its kept events tell. */
  startedTurn(sessionId: string, turnId: string): boolean {
    return this.#guard("read events from", () => this.#statements.turnStarted.get({ session_id: sessionId, turn_id: turnId }) !== undefined);
  }

  get(sessionId: string): StoredSession | undefined {
    return this.#guard("read a session from", () => {
      const row = this.#statements.session.get(sessionId);
      return row === undefined ? undefined : sessionOf(row);
    });
  }

  /** Sessions not ended, oldest first. */
  listOpen(): StoredSession[] {
    return this.#guard("list sessions in", () => this.#statements.openSessions.all().map(sessionOf));
  }

  /** Ended sessions, in the order they ended. */
  listEnded(): StoredSession[] {
    return this.#guard("list sessions in", () => this.#statements.endedSessions.all().map(sessionOf));
  }

  /** Ends a session: sets endedAt, endReason and status "ended", clears activeTurn and deletes its event log. */
  markEnded(sessionId: string, reason: string, endedAt: string): void {
    this.#guard("end a session in", () => this.#markEnded.immediate(sessionId, reason, endedAt));
  }

  /**
   * Deletes every ended session that is not among the newest `keep` or that ended before `endedBefore` (ISO 8601),
   * and returns their ids, the earliest ended first. Open sessions are never touched.
   */
  pruneEnded(keep: number, endedBefore: string): string[] {
    if (!Number.isSafeInteger(keep) || keep < 0) throw new RangeError(`keep must be a non-negative integer, not ${keep}`);
    return this.#guard("prune ended sessions in", () => this.#pruneEnded.immediate(keep, endedBefore));
  }

  /** Closes the file; later calls fail with SESSION_STORE_FAILED. Closing twice is harmless. */
  close(): void {
    if (this.#database.open) this.#database.close();
  }

  /** Applies a patch; false when no such session is stored. */
  #update(sessionId: string, patch: StoredSessionPatch): boolean {
    let written = false;
    for (const [table, columns] of byTable(columnsOf(patch))) {
      const names = Object.keys(columns);
      if (names.length === 0) continue;
      const sql = `UPDATE ${table} SET ${names.map((name) => `${name} = @${name}`).join(", ")} WHERE session_id = @session_id`;
      // Both tables hold a row for every stored session, so no row means no session.
      if (this.#prepared(sql).run({ ...columns, session_id: sessionId }).changes === 0) return false;
      written = true;
    }
    return written || this.#statements.sessionState.get(sessionId) !== undefined;
  }

  /** Inserts and updates name the columns they write, so their statements are prepared once per set of columns. */
  #prepared(sql: string): SqliteStatement<[ColumnValues], unknown> {
    let statement = this.#writes.get(sql);
    if (statement === undefined) {
      statement = this.#database.prepare<[ColumnValues]>(sql);
      this.#writes.set(sql, statement);
    }
    return statement;
  }

  #noSession(sessionId: string): PedelecError {
    return new PedelecError("SESSION_STORE_FAILED", `session ${sessionId} is not stored`);
  }

  #guard<Result>(action: string, work: () => Result): Result {
    if (!this.#database.open) throw new PedelecError("SESSION_STORE_FAILED", `could not ${action} session store ${this.file}: it is closed`);
    try {
      return work();
    } catch (error) {
      throw storeFailure(this.file, action, error);
    }
  }
}

function prepareStatements(database: SqliteDatabase) {
  // Only the newest `limit` seqs of a session are visible; older rows wait for the next amortized delete.
  const sessionRows = "SELECT * FROM sessions JOIN session_setups USING (session_id)";
  const keptWindow = "seq > (SELECT last_seq FROM sessions WHERE sessions.session_id = session_events.session_id) - @limit";
  return {
    session: database.prepare<[string], SessionRow>(`${sessionRows} WHERE session_id = ?`),
    sessionState: database.prepare<[string], Pick<SessionRow, "last_seq" | "ended_at">>(
      "SELECT last_seq, ended_at FROM sessions WHERE session_id = ?",
    ),
    openSessions: database.prepare<[], SessionRow>(`${sessionRows} WHERE ended_at IS NULL ORDER BY created_at, session_id`),
    endedSessions: database.prepare<[], SessionRow>(`${sessionRows} WHERE ended_at IS NOT NULL ORDER BY ended_at, session_id`),
    deleteSession: database.prepare<[string]>("DELETE FROM sessions WHERE session_id = ?"),
    deleteSetup: database.prepare<[string]>("DELETE FROM session_setups WHERE session_id = ?"),
    insertEvent: database.prepare<[string, number, string]>("INSERT INTO session_events (session_id, seq, envelope) VALUES (?, ?, ?)"),
    deleteEvents: database.prepare<[string]>("DELETE FROM session_events WHERE session_id = ?"),
    dropEventsUpTo: database.prepare<[string, number]>("DELETE FROM session_events WHERE session_id = ? AND seq <= ?"),
    eventsAfter: database
      .prepare<[{ session_id: string; after_seq: number; limit: number }], string>(
        `SELECT envelope FROM session_events WHERE session_id = @session_id AND seq > @after_seq AND ${keptWindow} ORDER BY seq`,
      )
      .pluck(),
    turnStarted: database
      .prepare<[{ session_id: string; turn_id: string }], number>(
        `SELECT 1 FROM session_events WHERE session_id = @session_id
           AND json_extract(envelope, '$.event.type') = 'turn-started' AND json_extract(envelope, '$.event.turnId') = @turn_id
         LIMIT 1`,
      )
      .pluck(),
    endedToPrune: database
      .prepare<[{ keep: number; ended_before: string }], string>(
        `SELECT session_id FROM (
           SELECT session_id, ended_at, ROW_NUMBER() OVER (ORDER BY ended_at DESC, session_id DESC) AS newest_rank
           FROM sessions WHERE ended_at IS NOT NULL
         ) WHERE newest_rank > @keep OR ended_at < @ended_before
         ORDER BY ended_at, session_id`,
      )
      .pluck(),
  };
}

/** Creates the folder (0700) and an empty file (0600) when missing; an existing file is not touched. */
function createPrivateFile(file: string): void {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  try {
    closeSync(openSync(file, "wx", 0o600));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  }
}

/** Refuses, without writing, a file that is not a session store this Pedelec can use. */
function checkReadable(database: SqliteDatabase, file: string): void {
  // The first read of the header: SQLite answers SQLITE_NOTADB for a file that is not a database at all.
  const applicationId = database.pragma("application_id", { simple: true }) as number;
  const version = database.pragma("user_version", { simple: true }) as number;
  const left = "it was left as it is";
  if (applicationId !== 0 && applicationId !== SESSION_STORE_APPLICATION_ID) {
    throw new PedelecError("SESSION_STORE_FAILED", `session store ${file} belongs to another program (application id ${applicationId}); ${left}`);
  }
  if (version > SESSION_STORE_SCHEMA_VERSION) {
    throw new PedelecError(
      "SESSION_STORE_FAILED",
      `session store ${file} was written by a newer Pedelec (schema version ${version}; this one knows up to ${SESSION_STORE_SCHEMA_VERSION}); ${left}`,
    );
  }
  if (version === 0) {
    const objects = database.prepare<[], number>("SELECT count(*) FROM sqlite_schema").pluck().get() ?? 0;
    if (objects > 0) throw new PedelecError("SESSION_STORE_FAILED", `session store ${file} holds tables Pedelec did not create; ${left}`);
  }
  // Reads every page once (no index cross-checks): catches a truncated or damaged file before anything is written.
  const problems = database.prepare<[], string>("PRAGMA quick_check(3)").pluck().all();
  if (problems.length !== 1 || problems[0] !== "ok") {
    const found = problems.flatMap((problem) => problem.split("\n")).filter((line) => !line.startsWith("***"));
    throw new PedelecError("SESSION_STORE_FAILED", `session store ${file} is corrupt (${found.join("; ")}); ${left}`);
  }
}

/** Runs every step the file lacks in one transaction, which also proves no other process holds the write lock. */
function migrate(database: SqliteDatabase, file: string): void {
  database
    .transaction(() => {
      const version = database.pragma("user_version", { simple: true }) as number;
      if (version > SESSION_STORE_SCHEMA_VERSION) {
        throw new PedelecError("SESSION_STORE_FAILED", `session store ${file} was written by a newer Pedelec (schema version ${version})`);
      }
      for (const migration of SESSION_STORE_MIGRATIONS) {
        if (migration.version <= version) continue;
        try {
          migration.apply(database);
        } catch (error) {
          const cause = error instanceof Error ? error.message : String(error);
          throw new PedelecError(
            "SESSION_STORE_FAILED",
            `session store ${file} could not be brought to schema version ${migration.version} (${migration.summary}): ${cause}; it was left at version ${version}`,
          );
        }
        database.pragma(`user_version = ${migration.version}`);
      }
    })
    .immediate();
}

/** A SESSION_STORE_FAILED error that names the file, what was being done and why it failed. */
function storeFailure(file: string, action: string, error: unknown): PedelecError {
  if (error instanceof PedelecError) return error;
  const code = (error as { code?: unknown } | null)?.code;
  const cause = error instanceof Error ? error.message : String(error);
  const problem = typeof code === "string" ? problemOf(code) : "it failed";
  return new PedelecError("SESSION_STORE_FAILED", `could not ${action} session store ${file}: ${problem} (${cause})`, {
    file,
    cause: typeof code === "string" ? code : null,
  });
}

function problemOf(code: string): string {
  if (code.startsWith("SQLITE_BUSY") || code.startsWith("SQLITE_LOCKED")) return "it is locked by another process";
  if (code === "SQLITE_NOTADB" || code.startsWith("SQLITE_CORRUPT")) return "it is corrupt or not a database; it was left as it is";
  if (code === "SQLITE_FULL") return "the disk is full";
  if (code.startsWith("SQLITE_IOERR")) return "the disk reported an I/O error";
  if (code.startsWith("SQLITE_CANTOPEN") || code.startsWith("SQLITE_READONLY") || code === "SQLITE_PERM") return "it cannot be opened for writing";
  if (code.startsWith("E")) return "it cannot be created or opened"; // Node's file system errors: ENOTDIR, EACCES, EROFS…
  return "it failed";
}
