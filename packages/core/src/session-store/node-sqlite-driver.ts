import type { SqliteDatabase, SqliteOpenOptions, SqliteStatement, SqliteTransaction } from "./sqlite-connection.js";
import { sqliteResultCodeName } from "./sqlite-result-codes.js";

// The part of `node:sqlite` used here (Node 22.13+; this project's @types/node describes Node 20, which has none).
interface StatementSync {
  run(...parameters: unknown[]): { changes: number | bigint };
  get(...parameters: unknown[]): Record<string, unknown> | undefined;
  all(...parameters: unknown[]): Record<string, unknown>[];
}
interface DatabaseSync {
  /** Absent in Node 22.13. */
  readonly isTransaction?: boolean;
  prepare(sql: string): StatementSync;
  exec(sql: string): void;
  close(): void;
}
interface NodeSqlite {
  DatabaseSync: new (file: string, options: { readOnly: boolean }) => DatabaseSync;
}

let builtin: { module: NodeSqlite | undefined } | undefined;

/**
 * Node's built-in `node:sqlite`, or undefined on a Node without it (Node 20, and Node 22 before 22.13 without
 * `--experimental-sqlite`). Node 22 warns at its first load that SQLite is experimental (24 and later do not); that
 * one warning is dropped, as the user can do nothing about it and the store's tests cover what it warns of.
 */
export function builtinSqlite(): NodeSqlite | undefined {
  if (builtin === undefined) {
    const emitWarning = process.emitWarning;
    process.emitWarning = function filteredWarning(this: unknown, warning: string | Error, ...rest: unknown[]) {
      const type = typeof rest[0] === "string" ? rest[0] : (rest[0] as { type?: string } | undefined)?.type;
      const text = typeof warning === "string" ? warning : warning.message;
      if (type === "ExperimentalWarning" && text.startsWith("SQLite is an experimental feature")) return;
      return (emitWarning as (...args: unknown[]) => void).call(process, warning, ...rest);
    } as typeof process.emitWarning;
    try {
      builtin = { module: process.getBuiltinModule?.("node:sqlite") as NodeSqlite | undefined };
    } finally {
      process.emitWarning = emitWarning;
    }
  }
  return builtin.module;
}

/** Gives a failure from SQLite better-sqlite3's `code` (its result code's name); other errors pass as they are. */
function translated(error: unknown): unknown {
  const { code, errcode } = (error ?? {}) as { code?: unknown; errcode?: unknown };
  if (code !== "ERR_SQLITE_ERROR" || typeof errcode !== "number") return error;
  return Object.assign(new Error((error as Error).message, { cause: error }), { name: "SqliteError", code: sqliteResultCodeName(errcode) });
}

function translating<Result>(work: () => Result): Result {
  try {
    return work();
  } catch (error) {
    throw translated(error);
  }
}

class NodeSqliteStatement<Parameters extends unknown[], Row> implements SqliteStatement<Parameters, Row> {
  readonly #statement: StatementSync;
  #plucked = false;

  constructor(statement: StatementSync) {
    this.#statement = statement;
  }

  run(...parameters: Parameters): { changes: number } {
    const { changes } = translating(() => this.#statement.run(...parameters));
    return { changes: Number(changes) };
  }

  get(...parameters: Parameters): Row | undefined {
    const row = translating(() => this.#statement.get(...parameters));
    return row === undefined ? undefined : this.#shaped(row);
  }

  all(...parameters: Parameters): Row[] {
    return translating(() => this.#statement.all(...parameters)).map((row) => this.#shaped(row));
  }

  pluck(): this {
    this.#plucked = true;
    return this;
  }

  #shaped(row: Record<string, unknown>): Row {
    return (this.#plucked ? Object.values(row)[0] : row) as Row;
  }
}

class NodeSqliteDatabase implements SqliteDatabase {
  readonly #database: DatabaseSync;
  // Kept here: Node 22.13's DatabaseSync has no `isOpen`.
  #open = true;

  constructor(database: DatabaseSync) {
    this.#database = database;
  }

  get open(): boolean {
    return this.#open;
  }

  prepare<Parameters extends unknown[] = unknown[], Row = unknown>(sql: string): SqliteStatement<Parameters, Row> {
    return new NodeSqliteStatement<Parameters, Row>(translating(() => this.#database.prepare(sql)));
  }

  exec(sql: string): this {
    translating(() => this.#database.exec(sql));
    return this;
  }

  pragma(source: string, options: { simple?: boolean } = {}): unknown {
    const statement = this.prepare<[], unknown>(`PRAGMA ${source}`);
    return options.simple ? statement.pluck().get() : statement.all();
  }

  transaction<Work extends (...args: never[]) => unknown>(work: Work): SqliteTransaction<Work> {
    return {
      immediate: (...args) => {
        this.exec("BEGIN IMMEDIATE");
        try {
          const result = work(...args) as ReturnType<Work>;
          this.exec("COMMIT");
          return result;
        } catch (error) {
          // As better-sqlite3 does: SQLite may have rolled back already (a failed COMMIT, some I/O errors).
          if (this.#database.isTransaction ?? true) {
            try {
              this.exec("ROLLBACK");
            } catch {
              // Nothing was open any more; the error that ended the transaction is the one to report.
            }
          }
          throw error;
        }
      },
    };
  }

  close(): void {
    translating(() => this.#database.close());
    this.#open = false;
  }
}

/** Opens `file` with `node:sqlite`; only called where `builtinSqlite()` found it. */
export function openWithNodeSqlite(file: string, options: Required<SqliteOpenOptions>): SqliteDatabase {
  const sqlite = builtinSqlite();
  if (sqlite === undefined) throw new Error(`this Node.js (${process.version}) has no node:sqlite`);
  const database = new NodeSqliteDatabase(translating(() => new sqlite.DatabaseSync(file, { readOnly: options.readonly })));
  // A pragma rather than the constructor's `timeout`, which early Node 22 releases do not have.
  database.exec(`PRAGMA busy_timeout = ${Math.trunc(options.busyTimeoutMs)}`);
  return database;
}
