import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { CoreServerFrame } from "@pedelec/protocol/core-wire";
import { encodeFrame } from "@pedelec/protocol/frame-codec";
import { collectGarbage } from "@pedelec/protocol/testing/heap-growth";
import { CoreConnection } from "@pedelec/core-client/core-client";
import { startCore, type RunningCore } from "./core-daemon.js";
import { RawCoreSocket } from "./testing/raw-core-socket.js";

const MiB = 1024 * 1024;
const PIECE_BYTES = 64 * 1024;

let home: string;
let core: RunningCore | undefined;
const sockets: RawCoreSocket[] = [];

beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), "pedelec-limits-"));
});
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  await core?.stop();
  core = undefined;
  await rm(home, { recursive: true, force: true });
});

async function openRaw(): Promise<RawCoreSocket> {
  const socket = await RawCoreSocket.open(core!.paths.socketPath);
  sockets.push(socket);
  return socket;
}

/** A request frame of about `bytes` bytes: a ping padded with a field Core refuses, so it answers INVALID_INPUT. */
function paddedPing(id: string, bytes: number): Buffer {
  const overhead = encodeFrame({ kind: "request", id, type: "ping", payload: { pad: "" } }, bytes).length;
  return encodeFrame({ kind: "request", id, type: "ping", payload: { pad: "x".repeat(bytes - overhead) } }, bytes);
}

async function writeInPieces(socket: RawCoreSocket, bytes: Buffer, pieceBytes = PIECE_BYTES): Promise<void> {
  for (let offset = 0; offset < bytes.length; offset += pieceBytes) await socket.write(bytes.subarray(offset, offset + pieceBytes));
}

const responseTo = (id: string) => (frame: CoreServerFrame) => frame.kind === "response" && frame.id === id;
const isFatal = (frame: CoreServerFrame) => frame.kind === "fatal";

describe("Core socket limits", () => {
  it("answers pings promptly while another client streams 16 MiB frames in 64 KiB pieces", async () => {
    core = await startCore({ ...process.env, PEDELEC_HOME: home });
    const pinger = await CoreConnection.open(core.paths.socketPath);
    const streamer = await openRaw();
    const frames = Array.from({ length: 4 }, (_, index) => paddedPing(`big-${index}`, 16 * MiB));
    let streaming = true;
    const streamed = (async () => {
      for (const [index, frame] of frames.entries()) {
        await writeInPieces(streamer, frame);
        await streamer.nextFrame(responseTo(`big-${index}`), 30_000);
      }
      streaming = false;
    })();
    const latencies: number[] = [];
    while (streaming) {
      const started = performance.now();
      await pinger.request("ping", {});
      latencies.push(performance.now() - started);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    await streamed;
    expect(streamer.received.map((received) => received.frame)).toEqual(
      frames.map((_, index) =>
        expect.objectContaining({
          kind: "response",
          id: `big-${index}`,
          ok: false,
          error: expect.objectContaining({ code: "INVALID_INPUT" }) as unknown,
        }),
      ),
    );
    expect(latencies.length).toBeGreaterThan(3);
    // Each piece costs Core time in proportion to the piece, so no ping waits behind a growing copy.
    expect(Math.max(...latencies)).toBeLessThan(1_000);
    pinger.close();
  });

  it("closes a connection that leaves a frame unfinished past the timeout, trickling or not, and keeps idle ones", async () => {
    core = await startCore({ ...process.env, PEDELEC_HOME: home }, { connectionLimits: { incompleteFrameTimeoutMs: 300 } });
    const idle = await openRaw();
    const halfOpen = await openRaw();
    const trickler = await openRaw();
    const frame = paddedPing("never-finished", 1000);
    const started = Date.now();
    await halfOpen.write(frame.subarray(0, 10));
    await trickler.write(frame.subarray(0, 10));
    const trickling = setInterval(() => void trickler.write(frame.subarray(10, 11)).catch(() => undefined), 50);
    try {
      for (const socket of [halfOpen, trickler]) {
        const fatal = await socket.nextFrame(isFatal, 5_000);
        expect(fatal.frame).toMatchObject({
          kind: "fatal",
          error: { code: "IPC_UNAVAILABLE", message: expect.stringContaining("unfinished") as string },
        });
        await socket.closedWithin(5_000);
      }
    } finally {
      clearInterval(trickling);
    }
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    // A client that sat between frames all that time is still served.
    await idle.writeFrame({ kind: "request", id: "still-here", type: "ping", payload: {} });
    expect((await idle.nextFrame(responseTo("still-here"))).frame).toMatchObject({ ok: true });
  });

  it("refuses a client over the connection cap with IPC_UNAVAILABLE, and serves again once one leaves", async () => {
    core = await startCore({ ...process.env, PEDELEC_HOME: home }, { connectionLimits: { maxConnections: 2 } });
    const first = await CoreConnection.open(core.paths.socketPath);
    const second = await CoreConnection.open(core.paths.socketPath);
    await Promise.all([first.request("ping", {}), second.request("ping", {})]);
    const excess = await openRaw();
    expect((await excess.nextFrame(isFatal)).frame).toMatchObject({
      error: { code: "IPC_UNAVAILABLE", message: expect.stringContaining("2 connections") as string },
    });
    await excess.closedWithin(5_000);
    second.close();
    const deadline = Date.now() + 5_000;
    for (;;) {
      const again = await CoreConnection.open(core.paths.socketPath);
      const answered = await again.request("ping", {}).then(
        () => true,
        () => false,
      );
      again.close();
      if (answered) break;
      if (Date.now() > deadline) throw new Error("Core did not serve a new client after one left");
    }
    first.close();
  });

  it("holds at most the configured bytes of unfinished frames across all connections", async () => {
    core = await startCore({ ...process.env, PEDELEC_HOME: home }, { connectionLimits: { maxPendingFrameBytes: 1 * MiB } });
    const frames = [paddedPing("a", 900 * 1024), paddedPing("b", 900 * 1024)];
    const clients = [await openRaw(), await openRaw()];
    // Each holds 600 KiB of an unfinished frame: together over the cap, so one of them is refused.
    // The refused one may see its last writes fail (EPIPE): Core closed its end.
    await Promise.allSettled(clients.map((client, index) => writeInPieces(client, frames[index]!.subarray(0, 600 * 1024))));
    const refusedIndex = await Promise.race(clients.map((client, index) => client.nextFrame(isFatal).then(() => index)));
    const refused = clients[refusedIndex]!;
    const kept = clients[1 - refusedIndex]!;
    expect(refused.received[0]?.frame).toMatchObject({
      error: { code: "IPC_UNAVAILABLE", message: expect.stringContaining("unfinished frames") as string },
    });
    await refused.closedWithin(5_000);
    // The other finishes its frame and is answered; a finished frame no longer counts against the cap.
    await writeInPieces(kept, frames[1 - refusedIndex]!.subarray(600 * 1024));
    await kept.nextFrame(responseTo(refusedIndex === 0 ? "b" : "a"));
    const later = await openRaw();
    await writeInPieces(later, paddedPing("later", 900 * 1024));
    expect((await later.nextFrame(responseTo("later"))).frame).toMatchObject({ ok: false, error: { code: "INVALID_INPUT" } });
    expect(kept.isClosed).toBe(false);
  });

  it("returns near its baseline memory after a burst of twenty 16 MiB frames", async () => {
    const settledRss = async (): Promise<number> => {
      for (let round = 0; round < 3; round += 1) {
        collectGarbage();
        await new Promise((resolve) => setImmediate(resolve));
      }
      return process.memoryUsage().rss;
    };
    core = await startCore({ ...process.env, PEDELEC_HOME: home });
    const client = await openRaw();
    const frame = paddedPing("burst", 16 * MiB);
    // One frame first, so code paths and allocator pools are warm before the baseline.
    await writeInPieces(client, frame);
    await client.nextFrame(responseTo("burst"));
    const baseline = await settledRss();
    for (let index = 0; index < 20; index += 1) {
      client.received.length = 0;
      await writeInPieces(client, frame);
      await client.nextFrame(responseTo("burst"), 30_000);
    }
    const after = await settledRss();
    // Loose: the allocator may keep some freed pages, but nothing near the 320 MiB that went through.
    expect((after - baseline) / MiB).toBeLessThan(96);
  });
});
