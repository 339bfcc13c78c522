import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { readUtf8Stream } from "./read-utf8-stream.js";

describe("readUtf8Stream", () => {
  it("joins the pieces of a stream, multi-byte characters split across pieces included", async () => {
    const snowman = Buffer.from("☃");
    const pieces = [Buffer.from('{"text":"'), snowman.subarray(0, 1), snowman.subarray(1), Buffer.from('"}')];
    expect(await readUtf8Stream(Readable.from(pieces), 1024)).toBe('{"text":"☃"}');
  });

  it("refuses invalid UTF-8 instead of replacing it", async () => {
    await expect(readUtf8Stream(Readable.from([Buffer.from([0x7b, 0xff, 0x7d])]), 1024)).rejects.toThrow(/encoded data was not valid/);
  });

  it("stops as soon as the stream passes the limit", async () => {
    let produced = 0;
    async function* endless() {
      for (;;) {
        produced += 1;
        yield Buffer.alloc(1024, 0x61);
      }
    }
    await expect(readUtf8Stream(endless(), 10 * 1024)).rejects.toThrow("more than 10240 bytes");
    expect(produced).toBe(11);
  });
});
