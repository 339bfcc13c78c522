import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { connectToCore } from "./core-launch.js";
import { pause, retryDelayMs, socketFileExists } from "./core-retry.js";

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
});
