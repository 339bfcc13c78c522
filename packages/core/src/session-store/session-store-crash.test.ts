import { spawn } from "node:child_process";
import { access, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { SessionStore } from "./session-store.js";
import { openSqliteDatabase } from "./sqlite-database.js";

// The writer drives the built store, as Core runs it.
const writerScript = fileURLToPath(new URL("./testing/event-writer.mjs", import.meta.url));
const builtStore = fileURLToPath(new URL("../../dist/session-store/session-store.js", import.meta.url));
/** How long the writer may go without reporting a commit: each one is flushed to disk, whose speed varies a lot. */
const STALL_DEADLINE_MS = 15_000;
const SESSION_ID = "session-crash-1";
const KEEP_EVERYTHING = { eventLimitPerSession: 10_000_000 };

let folder: string;
let file: string;

beforeAll(async () => {
  await access(builtStore).catch(() => {
    throw new Error(`${builtStore} is missing: build with \`npx tsc -b\` first`);
  });
});
beforeEach(async () => {
  folder = await mkdtemp(join(tmpdir(), "pedelec-session-store-crash-"));
  file = join(folder, "sessions.sqlite");
});
afterEach(async () => {
  await rm(folder, { recursive: true, force: true });
});

/**
 * Starts the writer, lets it report `linesBeforeKill` commits, kills it with SIGKILL and returns the last seq it
 * reported committed (after reading everything it printed before it died).
 */
function killMidBurst(linesBeforeKill: number): Promise<number> {
  const child = spawn(process.execPath, [writerScript, file, SESSION_ID], { stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  let lines = 0;
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  let deadline: NodeJS.Timeout | undefined;
  child.stdout.on("data", (chunk: Buffer) => {
    deadline?.refresh();
    const text = chunk.toString();
    stdout += text;
    lines += text.split("\n").length - 1;
    if (lines >= linesBeforeKill) child.kill("SIGKILL");
  });
  return new Promise<number>((resolvePromise, reject) => {
    deadline = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`the writer printed ${lines} of ${linesBeforeKill} lines, then nothing for ${STALL_DEADLINE_MS} ms; it said: ${stderr}`));
    }, STALL_DEADLINE_MS);
    // "close" comes after the exit and after the pipes are drained.
    child.on("close", (code, signal) => {
      clearTimeout(deadline);
      if (signal !== "SIGKILL") {
        reject(new Error(`the writer stopped by itself (code ${code}, signal ${signal}): ${stderr}`));
        return;
      }
      const complete = stdout
        .slice(0, stdout.lastIndexOf("\n") + 1)
        .trim()
        .split("\n");
      resolvePromise(Number(complete.at(-1)));
    });
  });
}

function integrityCheck(): string[] {
  const database = openSqliteDatabase(file);
  try {
    return database.prepare<[], string>("PRAGMA integrity_check").pluck().all();
  } finally {
    database.close();
  }
}

describe("SessionStore and a writer killed mid-burst", () => {
  it("opens after each SIGKILL with a gap-free prefix of events holding every reported commit, and the row in step", async () => {
    let previous = 0;
    // A kill right after the first commit, then bursts of several sizes, each resuming from what the last one kept.
    for (const linesBeforeKill of [1, 300, 1_500, 7, 2_500]) {
      const lastReported = await killMidBurst(linesBeforeKill);
      expect(lastReported).toBeGreaterThanOrEqual(previous + linesBeforeKill);

      const store = SessionStore.open(file, KEEP_EVERYTHING);
      try {
        expect(integrityCheck()).toEqual(["ok"]);
        const events = store.eventsAfter(SESSION_ID, 0);
        const kept = events.length;
        expect(kept).toBeGreaterThanOrEqual(lastReported);
        expect(events.map((envelope) => envelope.seq)).toEqual(Array.from({ length: kept }, (_, index) => index + 1));
        const newest = events.at(-1)?.event;
        expect(newest?.type === "chat-delta" && newest.delta.startsWith(`${kept} `)).toBe(true);
        // The row was written in the same transaction as the newest event.
        expect(store.get(SESSION_ID)).toMatchObject({
          lastSeq: kept,
          status: kept % 2 === 0 ? "running" : "waiting_tool_result",
          activeTurn: { turnId: `turn-${Math.floor(kept / 100)}`, turnKind: "user" },
        });
        previous = kept;
      } finally {
        store.close();
      }
    }
  }, 240_000);
});
