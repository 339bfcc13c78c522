import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { connectToCore } from "./core-launch.js";
import { pause, retryDelayMs, SocketFolderWatch, socketFileExists } from "./core-retry.js";

let root: string;
let server: Server | undefined;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "pedelec-core-retry-"));
});
afterEach(async () => {
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  server = undefined;
  await rm(root, { recursive: true, force: true });
});

/** What settles first: `promise` ("woken") or a deadline far past any event ("timed out"). */
function wokenOrTimedOut(promise: Promise<void>): Promise<"woken" | "timed out"> {
  return Promise.race([promise.then(() => "woken" as const), delay(10_000, "timed out" as const, { ref: false })]);
}

/** A socket that accepts connections (and says nothing), as Core does once it listens. */
function listenAt(socketPath: string): Promise<Server> {
  return new Promise((resolve, reject) => {
    const listening = createServer((socket) => socket.on("error", () => undefined));
    listening.once("error", reject);
    listening.listen(socketPath, () => resolve(listening));
  });
}

describe("waiting for a Core that is starting", () => {
  it("retries after 1 ms, then doubles the wait up to 10 ms", () => {
    expect([0, 1, 2, 3, 4, 5, 20].map(retryDelayMs)).toEqual([1, 2, 4, 8, 10, 10, 10]);
  });

  it("connects once the socket appears, and tells a missing socket file from a present one", async () => {
    const socketPath = join(root, "core.sock");
    expect(await socketFileExists(socketPath)).toBe(false);
    const accepted = new Promise<void>((resolve) => {
      setTimeout(() => {
        void listenAt(socketPath).then((listening) => {
          server = listening;
          listening.once("connection", () => resolve());
        });
      }, 100);
    });
    const connection = await connectToCore({ socketPath }, 15_000);
    expect(connection).toBeDefined();
    await accepted;
    expect(await socketFileExists(socketPath)).toBe(true);
    connection?.close();
  });

  it("gives up at the deadline, or as soon as it is cancelled", async () => {
    const socketPath = join(root, "core.sock");
    expect(await connectToCore({ socketPath }, 50)).toBeUndefined();
    const cancel = new AbortController();
    setTimeout(() => cancel.abort(), 50);
    const started = Date.now();
    expect(await connectToCore({ socketPath }, 60_000, cancel.signal)).toBeUndefined();
    expect(Date.now() - started).toBeLessThan(30_000);
  });

  it("ends a pause early when its signal aborts", async () => {
    const cancel = new AbortController();
    setTimeout(() => cancel.abort(), 20);
    const started = Date.now();
    await pause(60_000, cancel.signal);
    expect(Date.now() - started).toBeLessThan(30_000);
  });

  it("wakes a waiting pause as soon as the socket's folder changes, not when its delay ends", async () => {
    const folder = new SocketFolderWatch(join(root, "core.sock"));
    try {
      const paused = folder.pause(60_000);
      await writeFile(join(root, "core.sock"), "");
      expect(await wokenOrTimedOut(paused)).toBe("woken");
    } finally {
      folder.close();
    }
  });

  it("watches a folder that appears while it waits, trying again at once when it does", async () => {
    const runDir = join(root, "run");
    const folder = new SocketFolderWatch(join(runDir, "core.sock"));
    try {
      // No folder yet: the delay alone ends the pause.
      expect(await wokenOrTimedOut(folder.pause(1))).toBe("woken");
      await mkdir(runDir);
      // Found and watched now; the socket may already be there, so this pause does not wait.
      expect(await wokenOrTimedOut(folder.pause(60_000))).toBe("woken");
      const paused = folder.pause(60_000);
      await writeFile(join(runDir, "core.sock"), "");
      expect(await wokenOrTimedOut(paused)).toBe("woken");
    } finally {
      folder.close();
    }
  });
});
