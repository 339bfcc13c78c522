import { execFile } from "node:child_process";
import { access, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { fileURLToPath } from "node:url";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { builtinSqlite } from "./node-sqlite-driver.js";
import { defaultSqliteDriver, openSqliteDatabase, type SqliteDatabase, type SqliteDriver } from "./sqlite-database.js";
import { sqliteResultCodeName } from "./sqlite-result-codes.js";

const builtStore = fileURLToPath(new URL("../../dist/session-store/session-store.js", import.meta.url));

/** The drivers this Node can use: better-sqlite3 only where its native build loads (it is built for one Node ABI). */
function availableDrivers(): SqliteDriver[] {
  const drivers: SqliteDriver[] = builtinSqlite() === undefined ? [] : ["node:sqlite"];
  try {
    openSqliteDatabase(":memory:", {}, "better-sqlite3").close();
    drivers.push("better-sqlite3");
  } catch {
    // Not built for this Node.js.
  }
  return drivers;
}

let folder: string;
let file: string;
const opened: SqliteDatabase[] = [];

beforeEach(async () => {
  folder = await mkdtemp(join(tmpdir(), "pedelec-sqlite-database-"));
  file = join(folder, "test.sqlite");
});
afterEach(async () => {
  for (const database of opened.splice(0)) if (database.open) database.close();
  await rm(folder, { recursive: true, force: true });
});

describe("defaultSqliteDriver", () => {
  it("is node:sqlite on a Node that has it and better-sqlite3 on one that does not", () => {
    expect(defaultSqliteDriver()).toBe(process.getBuiltinModule("node:sqlite") === undefined ? "better-sqlite3" : "node:sqlite");
    expect(availableDrivers()).toContain(defaultSqliteDriver());
  });
});

describe("the session store on this Node", () => {
  beforeAll(async () => {
    await access(builtStore).catch(() => {
      throw new Error(`${builtStore} is missing: build with \`npx tsc -b\` first`);
    });
  });

  it("loads better-sqlite3 only where there is no node:sqlite, and prints no warning", async () => {
    // A process of its own: this one has loaded better-sqlite3 (or tried to) above.
    const program = `
      const { createRequire } = await import("node:module");
      const { SessionStore } = await import(${JSON.stringify(builtStore)});
      SessionStore.open(${JSON.stringify(file)}).close();
      const loaded = Object.keys(createRequire(import.meta.url).cache).some((path) => path.includes("better-sqlite3"));
      process.stdout.write(JSON.stringify({ loaded }));`;
    const { stdout, stderr } = await promisify(execFile)(process.execPath, ["--input-type=module", "-e", program]);
    expect(JSON.parse(stdout)).toEqual({ loaded: defaultSqliteDriver() === "better-sqlite3" });
    expect(stderr).toBe("");
  });
});

describe.each(availableDrivers())("openSqliteDatabase with %s", (driver) => {
  function open(options: Parameters<typeof openSqliteDatabase>[1] = {}, path = file): SqliteDatabase {
    const database = openSqliteDatabase(path, options, driver);
    opened.push(database);
    return database;
  }

  function failure(work: () => unknown): { code?: unknown; message?: unknown } {
    try {
      work();
    } catch (error) {
      return error as { code?: unknown; message?: unknown };
    }
    throw new Error("it did not fail");
  }

  it("runs statements with positional and named parameters, and plucks the first column", () => {
    const database = open();
    database.exec("CREATE TABLE notes (id INTEGER PRIMARY KEY NOT NULL, text TEXT NOT NULL, score INTEGER) STRICT");
    const insert = database.prepare<[number, string, number | null]>("INSERT INTO notes VALUES (?, ?, ?)");
    expect(insert.run(1, "first", 7)).toMatchObject({ changes: 1 });
    insert.run(2, "second", null);
    const update = database.prepare<[{ text: string; id: number }]>("UPDATE notes SET text = @text WHERE id = @id");
    expect(update.run({ text: "changed", id: 2 }).changes).toBe(1);
    expect(update.run({ text: "nobody", id: 9 }).changes).toBe(0);

    expect({ ...database.prepare<[number], Record<string, unknown>>("SELECT * FROM notes WHERE id = ?").get(1) }).toEqual({
      id: 1,
      text: "first",
      score: 7,
    });
    expect(database.prepare<[number]>("SELECT * FROM notes WHERE id = ?").get(3)).toBeUndefined();
    expect(database.prepare<[], string>("SELECT text FROM notes ORDER BY id").pluck().all()).toEqual(["first", "changed"]);
    expect(database.prepare<[], number | null>("SELECT score FROM notes WHERE id = 2").pluck().get()).toBeNull();
  });

  it("reads and sets pragmas, simple or as rows", () => {
    const database = open();
    expect(database.pragma("journal_mode = WAL", { simple: true })).toBe("wal");
    expect(database.pragma("user_version", { simple: true })).toBe(0);
    database.pragma("user_version = 7");
    expect(database.pragma("user_version", { simple: true })).toBe(7);
    expect(database.pragma("user_version")).toEqual([expect.objectContaining({ user_version: 7 })]);
    expect(database.pragma("busy_timeout", { simple: true })).toBe(5_000);
    expect(open({ busyTimeoutMs: 250 }).pragma("busy_timeout", { simple: true })).toBe(250);
  });

  it("commits an immediate transaction and rolls it back when its function throws", () => {
    const database = open();
    database.exec("CREATE TABLE counts (value INTEGER NOT NULL) STRICT");
    const insert = database.prepare<[number]>("INSERT INTO counts VALUES (?)");
    const values = database.prepare<[], number>("SELECT value FROM counts ORDER BY value").pluck();
    const add = database.transaction((first: number, second: number) => {
      insert.run(first);
      insert.run(second);
      if (second < 0) throw new Error("negative");
      return first + second;
    });

    expect(add.immediate(1, 2)).toBe(3);
    expect(() => add.immediate(5, -1)).toThrow("negative");
    expect(values.all()).toEqual([1, 2]);
    expect(add.immediate(3, 4)).toBe(7);
    expect(values.all()).toEqual([1, 2, 3, 4]);
  });

  it("fails with better-sqlite3's codes: busy, not a database, cannot open, read-only, constraint", async () => {
    const database = open({ busyTimeoutMs: 100 });
    database.exec("CREATE TABLE items (id INTEGER PRIMARY KEY NOT NULL) STRICT; INSERT INTO items VALUES (1)");
    expect(failure(() => database.exec("INSERT INTO items VALUES (1)"))).toMatchObject({
      code: "SQLITE_CONSTRAINT_PRIMARYKEY",
      message: expect.stringContaining("UNIQUE constraint failed: items.id"),
    });

    const other = open({ busyTimeoutMs: 100 });
    other.exec("BEGIN EXCLUSIVE");
    const started = performance.now();
    expect(failure(() => database.exec("BEGIN IMMEDIATE"))).toMatchObject({ code: "SQLITE_BUSY", message: "database is locked" });
    expect(performance.now() - started).toBeGreaterThanOrEqual(80);
    other.exec("ROLLBACK");

    const readOnly = open({ readonly: true });
    expect(failure(() => readOnly.exec("INSERT INTO items VALUES (2)"))).toMatchObject({ code: expect.stringMatching(/^SQLITE_READONLY/) });

    const notDatabase = join(folder, "not-a-database");
    await writeFile(notDatabase, Buffer.alloc(64 * 1024, 7));
    expect(failure(() => open({}, notDatabase).pragma("user_version", { simple: true }))).toMatchObject({ code: "SQLITE_NOTADB" });

    // A folder: better-sqlite3 checks a missing folder itself (a TypeError), so both meet SQLite's answer only here.
    expect(failure(() => open({}, folder).pragma("user_version", { simple: true }))).toMatchObject({ code: "SQLITE_CANTOPEN" });
  });

  it("closes once, and reports it", () => {
    const database = open();
    expect(database.open).toBe(true);
    database.close();
    expect(database.open).toBe(false);
  });
});

describe("sqliteResultCodeName", () => {
  it("names primary and extended result codes as better-sqlite3 does", () => {
    expect(sqliteResultCodeName(5)).toBe("SQLITE_BUSY");
    expect(sqliteResultCodeName(26)).toBe("SQLITE_NOTADB");
    expect(sqliteResultCodeName(19 | (6 << 8))).toBe("SQLITE_CONSTRAINT_PRIMARYKEY");
    expect(sqliteResultCodeName(10 | (2 << 8))).toBe("SQLITE_IOERR_SHORT_READ");
    expect(sqliteResultCodeName(4 | (2 << 8))).toBe("SQLITE_ABORT_ROLLBACK");
    expect(sqliteResultCodeName(5 | (3 << 8))).toBe("SQLITE_BUSY_TIMEOUT");
  });

  it("names an extended code it does not know by its primary code, and an unknown primary code as unknown", () => {
    expect(sqliteResultCodeName(10 | (99 << 8))).toBe("SQLITE_IOERR");
    expect(sqliteResultCodeName(4 | (1 << 8))).toBe("SQLITE_ABORT");
    expect(sqliteResultCodeName(200)).toBe("UNKNOWN_SQLITE_ERROR_200");
  });
});
