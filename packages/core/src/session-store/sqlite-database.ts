import { openWithBetterSqlite3 } from "./better-sqlite3-driver.js";
import { builtinSqlite, openWithNodeSqlite } from "./node-sqlite-driver.js";
import type { SqliteDatabase, SqliteOpenOptions } from "./sqlite-connection.js";

export type { SqliteDatabase, SqliteOpenOptions, SqliteStatement, SqliteTransaction } from "./sqlite-connection.js";

/** The SQLite bindings a connection can be made with. */
export type SqliteDriver = "node:sqlite" | "better-sqlite3";

/** better-sqlite3's default busy timeout, which connections by either driver keep. */
export const DEFAULT_SQLITE_BUSY_TIMEOUT_MS = 5_000;

/**
 * The driver `openSqliteDatabase` uses: Node's built-in `node:sqlite` (Node 22.13 and later) when this Node has it, so
 * no native build is needed there; better-sqlite3 on older Nodes, loaded only then.
 */
export function defaultSqliteDriver(): SqliteDriver {
  return builtinSqlite() === undefined ? "better-sqlite3" : "node:sqlite";
}

/**
 * Opens (creating when missing, unless `readonly`) the SQLite file `file`, or `":memory:"` for a database in memory.
 * Throws what the driver throws: a file that cannot be opened fails here, one that is not a database at its first read.
 */
export function openSqliteDatabase(file: string, options: SqliteOpenOptions = {}, driver: SqliteDriver = defaultSqliteDriver()): SqliteDatabase {
  const settled = { readonly: options.readonly ?? false, busyTimeoutMs: options.busyTimeoutMs ?? DEFAULT_SQLITE_BUSY_TIMEOUT_MS };
  return driver === "node:sqlite" ? openWithNodeSqlite(file, settled) : openWithBetterSqlite3(file, settled);
}
