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
    expect(() => encodeFrame({ text: "x".repeat(100) }, 50)).toThrowError(
      expect.objectContaining({ code: "MESSAGE_TOO_LARGE" }) as Error,
    );
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
