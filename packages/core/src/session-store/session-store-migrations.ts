import type { SqliteDatabase } from "./sqlite-database.js";

/**
 * The session store's schema, one step per version. A file records the version it is at in `PRAGMA user_version`;
 * opening it runs the steps after that version in order, all of them and the version bump in one transaction, so a
 * file is always at one version. Steps are never edited once released: a change is a new step at the end.
 */
export interface SessionStoreMigration {
  /** The schema version this step produces. */
  readonly version: number;
  /** What the step adds, for error messages. */
  readonly summary: string;
  readonly apply: (database: SqliteDatabase) => void;
}

/** Marks the file as Pedelec's session store (`PRAGMA application_id`, the bytes "PdlS"). */
export const SESSION_STORE_APPLICATION_ID = 0x50646c53;

export const SESSION_STORE_MIGRATIONS: readonly SessionStoreMigration[] = [
  {
    version: 1,
    summary: "sessions and their event log",
    apply(database) {
      database.exec(`
        PRAGMA application_id = ${SESSION_STORE_APPLICATION_ID};
        -- What changes while a session lives; small, as an append rewrites its row with every event.
        CREATE TABLE sessions (
          session_id TEXT PRIMARY KEY NOT NULL,
          origin TEXT NOT NULL,
          provider TEXT NOT NULL,
          model TEXT,
          effort_level TEXT NOT NULL,
          access TEXT NOT NULL,
          auto_end_on_disconnect INTEGER NOT NULL,
          workspace_path TEXT NOT NULL,
          workspace_managed INTEGER NOT NULL,
          executable_path TEXT NOT NULL,
          provider_session_id TEXT,
          status TEXT NOT NULL,
          created_at TEXT NOT NULL,
          last_activity_at TEXT NOT NULL,
          ended_at TEXT,
          end_reason TEXT,
          last_seq INTEGER NOT NULL
        ) STRICT;
        CREATE INDEX sessions_by_ended_at ON sessions (ended_at) WHERE ended_at IS NOT NULL;
        -- What createSession fixed: guidance and tools may run to megabytes, so they live apart from the hot row.
        CREATE TABLE session_setups (
          session_id TEXT PRIMARY KEY NOT NULL,
          effort_argv TEXT NOT NULL,
          guidance TEXT NOT NULL,
          tools TEXT NOT NULL
        ) STRICT;
        CREATE TABLE session_events (
          session_id TEXT NOT NULL,
          seq INTEGER NOT NULL,
          envelope TEXT NOT NULL,
          PRIMARY KEY (session_id, seq)
        ) STRICT, WITHOUT ROWID;
      `);
    },
  },
  {
    version: 2,
    summary: "the turn a session is running",
    apply(database) {
      database.exec(`
        ALTER TABLE sessions ADD COLUMN active_turn_id TEXT;
        ALTER TABLE sessions ADD COLUMN active_turn_kind TEXT;
      `);
    },
  },
  {
    version: 3,
    summary: "the tokens a session used",
    apply(database) {
      // One column per count, NULL while the provider never reported it.
      database.exec(`
        ALTER TABLE sessions ADD COLUMN usage_input_tokens INTEGER;
        ALTER TABLE sessions ADD COLUMN usage_output_tokens INTEGER;
        ALTER TABLE sessions ADD COLUMN usage_cached_input_tokens INTEGER;
        ALTER TABLE sessions ADD COLUMN usage_total_tokens INTEGER;
      `);
    },
  },
  {
    version: 4,
    summary: "explicit effort",
    apply(database) {
      // effort_level then holds an explicit effort's level instead of an effort profile's; every earlier row is a profile's.
      database.exec("ALTER TABLE sessions ADD COLUMN effort_explicit INTEGER NOT NULL DEFAULT 0;");
    },
  },
];

/** The version a file is at once every step has run. */
export const SESSION_STORE_SCHEMA_VERSION = SESSION_STORE_MIGRATIONS.length;
