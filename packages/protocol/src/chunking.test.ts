import { describe, expect, it } from "vitest";
import { ChunkAssembler, splitIntoChunks } from "./chunking.js";
import { chunkFrameSchema } from "./native-wire.js";

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
