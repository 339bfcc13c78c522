import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { LineSplitter } from "./line-splitter.js";

function collect(maxLineBytes = 1024) {
  const lines: string[] = [];
  const dropped: number[] = [];
  const splitter = new LineSplitter({ maxLineBytes, onLine: (line) => lines.push(line), onLineDropped: (size) => dropped.push(size) });
  return { splitter, lines, dropped };
}

describe("LineSplitter", () => {
  it("splits across chunks, strips \\r and flushes a last line without newline", () => {
    const { splitter, lines } = collect();
    splitter.push(Buffer.from("alpha\r\nbe"));
    splitter.push(Buffer.from("ta\n\ngam"));
    splitter.push(Buffer.from("ma"));
    expect(lines).toEqual(["alpha", "beta", ""]);
    splitter.end();
    expect(lines).toEqual(["alpha", "beta", "", "gamma"]);
  });

  it("keeps a multi-byte character that straddles two chunks", () => {
    const { splitter, lines } = collect();
    const bytes = Buffer.from("héllo 😀\n");
    for (const byte of bytes) splitter.push(Buffer.from([byte]));
    expect(lines).toEqual(["héllo 😀"]);
  });

  it("drops a line longer than the cap, reports its size, and goes on with the next line", () => {
    const { splitter, lines, dropped } = collect(10);
    splitter.push(Buffer.from("short\n0123456"));
    splitter.push(Buffer.from("789abcdef"));
    splitter.push(Buffer.from("ghij\nafter\n"));
    expect(lines).toEqual(["short", "after"]);
    expect(dropped).toEqual([20]);
  });

  it("accepts a line of exactly the cap", () => {
    const { splitter, lines, dropped } = collect(4);
    splitter.push(Buffer.from("abcd\nabcde\n"));
    expect(lines).toEqual(["abcd"]);
    expect(dropped).toEqual([5]);
  });

  it("reports an over-long last line at the end", () => {
    const { splitter, lines, dropped } = collect(3);
    splitter.push(Buffer.from("abcdef"));
    splitter.end();
    expect(lines).toEqual([]);
    expect(dropped).toEqual([6]);
  });
});

describe("LineSplitter, any chunking", () => {
  it("gives the lines of the whole input, wherever the chunks are cut", () => {
    const text = fc.stringMatching(/^[a-z\r\né😀]{0,40}$/u);
    fc.assert(
      fc.property(fc.array(text, { maxLength: 6 }), fc.array(fc.nat(), { maxLength: 8 }), fc.integer({ min: 1, max: 12 }), (parts, cuts, cap) => {
        const input = Buffer.from(parts.join("\n"));
        const { splitter, lines, dropped } = collect(cap);
        let from = 0;
        for (const cut of [...cuts.map((value) => value % (input.length + 1))].sort((a, b) => a - b)) {
          splitter.push(input.subarray(from, Math.max(from, cut)));
          from = Math.max(from, cut);
        }
        splitter.push(input.subarray(from));
        splitter.end();
        // The reference: split the bytes on \n, drop the last piece if empty (no final line), apply the cap to bytes.
        const pieces = input.length === 0 ? [] : input.toString("latin1").split("\n");
        if (pieces.length > 0 && pieces[pieces.length - 1] === "") pieces.pop();
        const expectedLines: string[] = [];
        const expectedDropped: number[] = [];
        for (const piece of pieces) {
          const bytes = Buffer.from(piece, "latin1");
          if (bytes.length > cap) expectedDropped.push(bytes.length);
          else expectedLines.push(bytes.toString("utf8").replace(/\r$/, ""));
        }
        expect(lines).toEqual(expectedLines);
        expect(dropped).toEqual(expectedDropped);
      }),
    );
  });
});
