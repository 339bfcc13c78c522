import { describe, expect, it } from "vitest";
import { encodeFrame, FrameDecoder } from "./frame-codec.js";
import { PedelecError } from "./pedelec-error.js";

describe("frame codec", () => {
  it("round-trips frames split at every byte boundary", () => {
    const messages = [{ a: 1 }, { text: "héllo ✓ 你好" }, { list: [1, 2, 3] }];
    const bytes = Buffer.concat(messages.map((message) => encodeFrame(message, 1024)));
    for (let split = 0; split <= bytes.length; split += 1) {
      const decoder = new FrameDecoder(1024);
      const frames = [...decoder.push(bytes.subarray(0, split)), ...decoder.push(bytes.subarray(split))];
      expect(frames).toEqual(messages.map((message) => ({ ok: true, message })));
    }
  });

  it("uses a 4-byte little-endian length, as Chrome Native Messaging does", () => {
    const frame = encodeFrame({ x: "y" }, 100);
    expect(frame.readUInt32LE(0)).toBe(Buffer.byteLength('{"x":"y"}'));
    expect(frame.subarray(4).toString()).toBe('{"x":"y"}');
  });

  it("refuses to encode a message over the limit with MESSAGE_TOO_LARGE", () => {
    expect(() => encodeFrame({ text: "x".repeat(100) }, 50)).toThrowError(expect.objectContaining({ code: "MESSAGE_TOO_LARGE" }) as Error);
  });

  it("reports an oversized declared length without buffering the body, then stops", () => {
    const decoder = new FrameDecoder(10);
    const header = Buffer.alloc(4);
    header.writeUInt32LE(11, 0);
    const [frame] = decoder.push(header);
    expect(frame?.ok).toBe(false);
    expect(frame && !frame.ok && frame.error.code).toBe("MESSAGE_TOO_LARGE");
    expect(decoder.push(encodeFrame({}, 10))).toEqual([]);
  });

  it("reports a body that is not JSON as INVALID_INPUT", () => {
    const body = Buffer.from("{nope", "utf8");
    const header = Buffer.alloc(4);
    header.writeUInt32LE(body.length, 0);
    const [frame] = new FrameDecoder(100).push(Buffer.concat([header, body]));
    expect(frame && !frame.ok && frame.error).toBeInstanceOf(PedelecError);
    expect(frame && !frame.ok && frame.error.code).toBe("INVALID_INPUT");
  });
});

describe("frame decoding cost and honesty", () => {
  function frameOfSize(bytes: number): Buffer {
    const overhead = encodeFrame({ text: "" }, bytes).length;
    return encodeFrame({ text: "x".repeat(bytes - overhead) }, bytes);
  }

  /** Best of three runs, so one hiccup of a busy machine does not decide the ratio. */
  function decodeMilliseconds(frame: Buffer, pieceBytes: number): number {
    let best = Number.POSITIVE_INFINITY;
    for (let run = 0; run < 3; run += 1) {
      const decoder = new FrameDecoder(frame.length);
      const started = performance.now();
      let frames = 0;
      for (let offset = 0; offset < frame.length; offset += pieceBytes) {
        frames += decoder.push(frame.subarray(offset, offset + pieceBytes)).filter((decoded) => decoded.ok).length;
      }
      best = Math.min(best, performance.now() - started);
      expect(frames).toBe(1);
    }
    return best;
  }

  it.each([
    ["64 KiB", 64 * 1024],
    ["4 KiB", 4 * 1024],
  ])("decodes a frame fed in %s pieces in time linear in its size (16 MiB against 1 MiB)", (_label, pieceBytes) => {
    // The best of three runs each: on a busy machine one slow run says nothing about the algorithm.
    const best = (frame: Buffer): number => Math.min(...[0, 1, 2].map(() => decodeMilliseconds(frame, pieceBytes)));
    const small = best(frameOfSize(1024 * 1024));
    const large = best(frameOfSize(16 * 1024 * 1024));
    // Linear is a ratio near 16. Copying everything held on each piece grows with the square of the size: 16 MiB
    // in 4 KiB pieces then copies some 34 GB.
    expect(large / Math.max(small, 0.5)).toBeLessThan(40);
  });

  it("reassembles frames from pieces of every size, tiny ones included", () => {
    const messages = Array.from({ length: 200 }, (_, index) => ({ index, text: "ünïcødé ✓ ".repeat(index % 17) }));
    const bytes = Buffer.concat(messages.map((message) => encodeFrame(message, 4096)));
    for (const pieceBytes of [1, 3, 7, 100, 4099, 20_000, bytes.length]) {
      const decoder = new FrameDecoder(4096);
      const decoded = [];
      for (let offset = 0; offset < bytes.length; offset += pieceBytes) decoded.push(...decoder.push(bytes.subarray(offset, offset + pieceBytes)));
      expect(decoded).toEqual(messages.map((message) => ({ ok: true, message })));
      expect(decoder.pendingBytes).toBe(0);
    }
  });

  it("refuses an oversized length from the header alone and drops whatever body follows", () => {
    const decoder = new FrameDecoder(1024);
    const header = Buffer.alloc(4);
    header.writeUInt32LE(64 * 1024 * 1024, 0);
    const frames = decoder.push(Buffer.concat([header, Buffer.alloc(10_000, 0x20)]));
    expect(frames).toHaveLength(1);
    expect(frames[0]?.ok === false && frames[0].error.code).toBe("MESSAGE_TOO_LARGE");
    expect(decoder.pendingBytes).toBe(0);
    expect(decoder.push(Buffer.alloc(10_000, 0x20))).toEqual([]);
    expect(decoder.pendingBytes).toBe(0);
  });

  it("counts the bytes of an unfinished frame, header included", () => {
    const decoder = new FrameDecoder(1024);
    const frame = encodeFrame({ text: "hello" }, 1024);
    expect(decoder.push(frame.subarray(0, 2))).toEqual([]);
    expect(decoder.pendingBytes).toBe(2);
    expect(decoder.push(frame.subarray(2, 4))).toEqual([]);
    expect(decoder.pendingBytes).toBe(4);
    expect(decoder.push(frame.subarray(4, 9))).toEqual([]);
    expect(decoder.pendingBytes).toBe(9);
    expect(decoder.push(frame.subarray(9))).toEqual([{ ok: true, message: { text: "hello" } }]);
    expect(decoder.pendingBytes).toBe(0);
  });

  it.each([
    ["a byte that never starts UTF-8", [0xff]],
    ["a truncated two-byte sequence", [0xc3]],
    ["an overlong encoding of '/'", [0xc0, 0xaf]],
    ["an encoded UTF-16 surrogate", [0xed, 0xa0, 0x80]],
  ])("rejects invalid UTF-8 (%s) with INVALID_INPUT instead of replacing it", (_label, bad) => {
    const body = Buffer.concat([Buffer.from('{"text":"a'), Buffer.from(bad), Buffer.from('b"}')]);
    const header = Buffer.alloc(4);
    header.writeUInt32LE(body.length, 0);
    const decoder = new FrameDecoder(1024);
    const [frame] = decoder.push(Buffer.concat([header, body]));
    expect(frame?.ok).toBe(false);
    const error = frame && !frame.ok ? frame.error : undefined;
    expect(error?.code).toBe("INVALID_INPUT");
    expect(error?.message).toMatch(/not valid UTF-8: .*not valid/);
    expect(error?.message).not.toContain("\uFFFD");
    // The stream is out of step after a bad frame: nothing more is decoded.
    expect(decoder.push(encodeFrame({ after: true }, 1024))).toEqual([]);
  });

  it("keeps a byte-order mark as text, so a body starting with one is not JSON", () => {
    const body = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from("{}")]);
    const header = Buffer.alloc(4);
    header.writeUInt32LE(body.length, 0);
    const [frame] = new FrameDecoder(100).push(Buffer.concat([header, body]));
    expect(frame && !frame.ok && frame.error.code).toBe("INVALID_INPUT");
  });
});
