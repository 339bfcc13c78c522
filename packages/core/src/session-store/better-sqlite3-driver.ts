import { createRequire } from "node:module";
import type BetterSqlite3 from "better-sqlite3";
import type { SqliteDatabase, SqliteOpenOptions } from "./sqlite-connection.js";

let betterSqlite3: typeof BetterSqlite3 | undefined;

/**
 * better-sqlite3, required on first use: a native addon built for one Node ABI, which a Node that has `node:sqlite`
 * never loads. Core's bundle keeps it in node_modules (scripts/bundle.mjs), where this require finds it.
 */
function loadBetterSqlite3(): typeof BetterSqlite3 {
  betterSqlite3 ??= createRequire(import.meta.url)("better-sqlite3") as typeof BetterSqlite3;
  return betterSqlite3;
}

/** Opens `file` with better-sqlite3, whose `Database` is the seam's interface as it is. */
export function openWithBetterSqlite3(file: string, options: Required<SqliteOpenOptions>): SqliteDatabase {
  const Database = loadBetterSqlite3();
  const database = new Database(file, { readonly: options.readonly, fileMustExist: false, timeout: options.busyTimeoutMs });
  // Every member of SqliteDatabase is better-sqlite3's own; only its prepare's conditional generic defeats the check.
  return database as unknown as SqliteDatabase;
}
