import { randomBytes } from "node:crypto";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DEFAULT_BUSY_TIMEOUT_MS, SessionStore } from "./session-store.js";
import { openSqliteDatabase, type SqliteDatabase } from "./sqlite-database.js";
import { chatDelta, storedSession } from "./testing/stored-session.js";

/** SQLite's default page size, which the store keeps. */
const PAGE_SIZE = 4096;

let folder: string;
let file: string;

beforeEach(async () => {
  folder = await mkdtemp(join(tmpdir(), "pedelec-session-store-failures-"));
  file = join(folder, "sessions.sqlite");
});
afterEach(async () => {
  await rm(folder, { recursive: true, force: true });
});

/**
 * A closed, healthy store file of about 400 KiB, most of it one session's guidance: pages that only a full read
 * (quick_check) visits at open, so a damaged copy is caught there rather than by a later `get`.
 */
async function healthyStoreBytes(): Promise<Buffer> {
  const store = SessionStore.open(file);
  store.insertSession(storedSession("session-healthy-1", { guidance: "g".repeat(400_000) }));
  store.close();
  const bytes = await readFile(file);
  await rm(file);
  return bytes;
}

function openFailure(options?: Parameters<typeof SessionStore.open>[1]): { code?: string; message?: string } {
  try {
    SessionStore.open(file, options).close();
  } catch (error) {
    return error as { code?: string; message?: string };
  }
  throw new Error(`${file} opened`);
}

describe("SessionStore.open on a damaged file", () => {
  it.each([
    ["random bytes", async () => randomBytes(64 * 1024)],
    [
      "a database cut off half-way",
      async () => {
        const healthy = await healthyStoreBytes();
        return healthy.subarray(0, Math.floor(healthy.length / 2));
      },
    ],
    [
      "a database with one page in the middle overwritten",
      async () => {
        const damaged = await healthyStoreBytes();
        const page = Math.floor(damaged.length / PAGE_SIZE / 2);
        return damaged.fill(0xff, page * PAGE_SIZE, (page + 1) * PAGE_SIZE);
      },
    ],
    [
      "a valid header followed by garbage",
      async () => {
        const healthy = await healthyStoreBytes();
        return Buffer.concat([healthy.subarray(0, PAGE_SIZE), randomBytes(healthy.length - PAGE_SIZE)]);
      },
    ],
  ])("refuses %s with SESSION_STORE_FAILED and leaves the file byte for byte as it was", async (_name, damagedBytes) => {
    const damaged = await damagedBytes();
    await writeFile(file, damaged);
    const failure = openFailure();
    expect(failure.code).toBe("SESSION_STORE_FAILED");
    expect(failure.message).toContain(`session store ${file}`);
    expect(failure.message).toMatch(/corrupt/);
    expect((await readFile(file)).equals(damaged)).toBe(true);
    // Refusing again gives the same answer: nothing was repaired or replaced in between.
    expect(openFailure().code).toBe("SESSION_STORE_FAILED");
    expect((await readFile(file)).equals(damaged)).toBe(true);
  });
});

describe("SessionStore.open where it cannot write", () => {
  it("names the file when its folder cannot be created", async () => {
    await writeFile(join(folder, "not-a-folder"), "");
    file = join(folder, "not-a-folder", "sessions.sqlite");
    expect(openFailure()).toMatchObject({
      code: "SESSION_STORE_FAILED",
      message: expect.stringMatching(new RegExp(`^could not open session store ${file}: it cannot be created or opened`)),
    });
  });

  it("names the file when the path is a folder", async () => {
    await mkdir(file);
    expect(openFailure()).toMatchObject({ code: "SESSION_STORE_FAILED", message: expect.stringContaining(`could not open session store ${file}:`) });
  });
});

describe("SessionStore and a lock held by another process", () => {
  let other: SqliteDatabase | undefined;
  afterEach(() => {
    other?.close();
    other = undefined;
  });

  function holdExclusiveLock(): void {
    other = openSqliteDatabase(file);
    other.exec("BEGIN EXCLUSIVE");
  }

  it("fails to open with 'locked by another process' once the busy timeout has passed, and opens after release", () => {
    SessionStore.open(file).close();
    holdExclusiveLock();
    const started = performance.now();
    const failure = openFailure();
    const waitedMs = performance.now() - started;
    expect(failure).toMatchObject({
      code: "SESSION_STORE_FAILED",
      message: expect.stringContaining(`could not open session store ${file}: it is locked by another process`),
    });
    expect(waitedMs).toBeGreaterThanOrEqual(DEFAULT_BUSY_TIMEOUT_MS * 0.9);
    expect(waitedMs).toBeLessThan(DEFAULT_BUSY_TIMEOUT_MS + 1_500);

    other?.exec("ROLLBACK");
    SessionStore.open(file).close();
  });

  it("fails to open a file that is not yet in WAL mode while another connection holds it", () => {
    // A fresh file is in rollback-journal mode, where an exclusive lock keeps even readers out.
    openSqliteDatabase(file).close();
    holdExclusiveLock();
    expect(openFailure({ busyTimeoutMs: 100 })).toMatchObject({
      code: "SESSION_STORE_FAILED",
      message: expect.stringContaining("locked by another process"),
    });
  });

  it("fails a write while the lock is held and loses nothing once it is released", () => {
    const store = SessionStore.open(file, { busyTimeoutMs: 200 });
    try {
      store.insertSession(storedSession("session-locked-1"));
      store.appendEvent(chatDelta("session-locked-1", 1));
      holdExclusiveLock();
      const started = performance.now();
      expect(() => store.appendEvent(chatDelta("session-locked-1", 2), { status: "running" })).toThrow(
        expect.objectContaining({ code: "SESSION_STORE_FAILED", message: expect.stringContaining("append an event to session store") }),
      );
      expect(performance.now() - started).toBeGreaterThanOrEqual(150);
      // Reading is not blocked by a writer in WAL mode.
      expect(store.get("session-locked-1")).toMatchObject({ lastSeq: 1, status: "waiting_tool_result" });

      other?.exec("ROLLBACK");
      store.appendEvent(chatDelta("session-locked-1", 2), { status: "running" });
      expect(store.eventsAfter("session-locked-1", 0).map((envelope) => envelope.seq)).toEqual([1, 2]);
      expect(store.get("session-locked-1")).toMatchObject({ lastSeq: 2, status: "running" });
    } finally {
      store.close();
    }
  });
});
