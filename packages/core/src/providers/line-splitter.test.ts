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
