import { describe, expect, it } from "vitest";
import { ChunkAssembler, reassemblingTransport, splitIntoChunks, splittingTransport } from "./chunking.js";
import { chunkFrameSchema } from "./native-wire.js";
import type { PedelecError } from "./pedelec-error.js";
import { createLinkedTransportPair, type MessageTransport } from "./transport.js";

const encoder = new TextEncoder();

describe("chunking", () => {
  it("leaves a small message whole", () => {
    expect(splitIntoChunks({ a: 1 }, 1000, "c1")).toEqual(['{"a":1}']);
  });

  it("splits a large message into frames under the byte limit and reassembles it exactly", () => {
    // Quotes, control characters and astral characters all grow when escaped or encoded.
    const text = `${'"\u0001'.repeat(5000)}${"😀".repeat(3000)}${"plain ".repeat(4000)}`;
    const message = { kind: "event", text };
    const frames = splitIntoChunks(message, 4096, "big");
    expect(frames.length).toBeGreaterThan(2);
    const assembler = new ChunkAssembler(10_000_000);
    let result: unknown;
    for (const frame of frames) {
      expect(encoder.encode(frame).byteLength).toBeLessThanOrEqual(4096);
      result = assembler.add(chunkFrameSchema.parse(JSON.parse(frame)));
    }
    expect(result).toEqual(message);
  });

  it("rejects inconsistent or duplicated pieces with SDK_PROTOCOL_ERROR", () => {
    const assembler = new ChunkAssembler(1000);
    assembler.add({ kind: "chunk", chunkId: "x", index: 0, count: 2, data: "{" });
    expect(() => assembler.add({ kind: "chunk", chunkId: "x", index: 0, count: 2, data: "}" })).toThrowError(
      expect.objectContaining({ code: "SDK_PROTOCOL_ERROR" }) as Error,
    );
  });

  it("caps the reassembled size with MESSAGE_TOO_LARGE", () => {
    const assembler = new ChunkAssembler(10);
    expect(() => assembler.add({ kind: "chunk", chunkId: "y", index: 0, count: 3, data: "x".repeat(11) })).toThrowError(
      expect.objectContaining({ code: "MESSAGE_TOO_LARGE" }) as Error,
    );
  });
});

/** The receiving end of a JSON-text link as a transport of parsed messages (what Chrome does for the extension). */
function parsedEnd<Outgoing>(inner: MessageTransport<string, Outgoing>): MessageTransport<unknown, Outgoing> {
  return {
    send: (message) => inner.send(message),
    close: () => inner.close(),
    onMessage: (listener) => inner.onMessage((json) => listener(JSON.parse(json))),
    onClose: (listener) => inner.onClose(listener),
  };
}

/** Resolves with the first `count` messages `transport` receives, or rejects past the deadline. */
function nextMessages(transport: MessageTransport<unknown, unknown>, count: number, deadlineMs = 2_000): Promise<unknown[]> {
  return new Promise((resolve, reject) => {
    const messages: unknown[] = [];
    const timer = setTimeout(() => reject(new Error(`received ${messages.length} of ${count} messages`)), deadlineMs);
    const stop = transport.onMessage((message) => {
      messages.push(message);
      if (messages.length < count) return;
      clearTimeout(timer);
      stop();
      resolve(messages);
    });
  });
}

describe("chunking transports", () => {
  function link(maxBytes: number, maxMessageBytes = 10_000_000) {
    const [hostEnd, extensionEnd] = createLinkedTransportPair<unknown, string>();
    let chunkIds = 0;
    const host = splittingTransport(hostEnd, { maxBytes, createChunkId: () => `chunk-${++chunkIds}` });
    const dropped: PedelecError[] = [];
    const framesSeen: string[] = [];
    extensionEnd.onMessage((json) => framesSeen.push(json));
    const extension = reassemblingTransport(parsedEnd(extensionEnd), { maxMessageBytes, onDropped: (error) => dropped.push(error) });
    return { host, hostEnd, extension, extensionEnd, dropped, framesSeen };
  }

  it("splits what the host sends into frames under the limit and delivers each message whole, in order", async () => {
    const { host, extension, framesSeen } = link(2048);
    const big = { kind: "event", text: `${'\u0001"'.repeat(2000)}${"😀".repeat(1500)}` };
    const arriving = nextMessages(extension, 3);
    host.send({ kind: "host-status", core: "connected" });
    host.send(big);
    host.send({ kind: "response", id: "r1", ok: true, result: 1 });
    expect(await arriving).toEqual([{ kind: "host-status", core: "connected" }, big, { kind: "response", id: "r1", ok: true, result: 1 }]);
    expect(framesSeen.length).toBeGreaterThan(4);
    for (const frame of framesSeen) expect(encoder.encode(frame).byteLength).toBeLessThanOrEqual(2048);
  });

  it("drops a piece that is not a valid chunk frame, or does not fit its message, and keeps delivering", async () => {
    const { hostEnd, extension, dropped } = link(2048);
    const arriving = nextMessages(extension, 1);
    hostEnd.send(JSON.stringify({ kind: "chunk", chunkId: "c", index: 0, count: 1, data: "{}" }));
    hostEnd.send(JSON.stringify({ kind: "chunk", chunkId: "d", index: 0, count: 2, data: "{" }));
    hostEnd.send(JSON.stringify({ kind: "chunk", chunkId: "d", index: 0, count: 2, data: "{" }));
    hostEnd.send(JSON.stringify({ kind: "response", id: "r1", ok: true, result: null }));
    expect(await arriving).toEqual([{ kind: "response", id: "r1", ok: true, result: null }]);
    expect(dropped.map((error) => error.code)).toEqual(["SDK_PROTOCOL_ERROR", "SDK_PROTOCOL_ERROR"]);
  });

  it("refuses a reassembled message over the cap with MESSAGE_TOO_LARGE", async () => {
    const { host, extension, dropped } = link(1024, 4096);
    const arriving = nextMessages(extension, 1);
    host.send({ text: "x".repeat(10_000) });
    host.send({ small: true });
    expect(await arriving).toEqual([{ small: true }]);
    expect(dropped.map((error) => error.code)).toContain("MESSAGE_TOO_LARGE");
  });

  it("passes closing through both wrappers", async () => {
    const { host, extension } = link(1024);
    const closed = new Promise<void>((resolve) => extension.onClose(() => resolve()));
    host.close();
    await closed;
  });
});
