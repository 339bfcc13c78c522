// What a connection to one SQLite file offers, whichever driver serves it: the drivers implement it, sqlite-database.ts
// picks one.

/**
 * A prepared statement, the part of better-sqlite3's `Statement` the session store uses. `Parameters` are the bound
 * values (positional, or one object whose keys name `@name` parameters); `Row` is what `get` and `all` return.
 */
export interface SqliteStatement<Parameters extends unknown[] = unknown[], Row = unknown> {
  run(...parameters: Parameters): { changes: number };
  /** The first row, or undefined when there is none. */
  get(...parameters: Parameters): Row | undefined;
  all(...parameters: Parameters): Row[];
  /** Makes `get` and `all` return each row's first column instead of the row; returns the same statement. */
  pluck(): this;
}

/** A function run in one transaction, as better-sqlite3's `Database.transaction` makes it. */
export interface SqliteTransaction<Work extends (...args: never[]) => unknown> {
  /**
   * Runs the function between `BEGIN IMMEDIATE` and `COMMIT`, rolling back when it throws. Transactions do not nest:
   * starting one inside another fails.
   */
  immediate(...args: Parameters<Work>): ReturnType<Work>;
}

/**
 * A connection to one SQLite file, the part of better-sqlite3's `Database` the session store uses, served by Node's
 * built-in `node:sqlite` where there is one and by better-sqlite3 otherwise. Failures from SQLite itself carry
 * better-sqlite3's codes (`error.code` is `SQLITE_BUSY`, `SQLITE_NOTADB`, `SQLITE_CONSTRAINT_PRIMARYKEY`…) with either.
 *
 * @example
 * ```ts
 * const database = openSqliteDatabase(file, { busyTimeoutMs: 2_000 });
 * database.pragma("journal_mode = WAL", { simple: true }); // "wal"
 * const count = database.prepare<[], number>("SELECT count(*) FROM sqlite_schema").pluck().get();
 * database.close();
 * ```
 */
export interface SqliteDatabase {
  /** False once closed. */
  readonly open: boolean;
  prepare<Parameters extends unknown[] = unknown[], Row = unknown>(sql: string): SqliteStatement<Parameters, Row>;
  /** Runs one or more statements that return nothing. */
  exec(sql: string): unknown;
  /**
   * Runs `PRAGMA <source>`: with `simple`, returns the first column of the first row (undefined when the pragma returns
   * none), otherwise every row.
   */
  pragma(source: string, options?: { simple?: boolean }): unknown;
  transaction<Work extends (...args: never[]) => unknown>(work: Work): SqliteTransaction<Work>;
  close(): void;
}

export interface SqliteOpenOptions {
  /** Opens the file for reading only. Default false. */
  readonly?: boolean;
  /** How long a statement waits for a lock another connection holds before failing with SQLITE_BUSY. Default 5,000 ms. */
  busyTimeoutMs?: number;
}
