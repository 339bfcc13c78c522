import { describe, expect, it } from "vitest";
import { LineTooLongError, ndjsonLines } from "./ndjson-lines.js";

async function* chunks(...parts: (string | Uint8Array)[]): AsyncGenerator<Uint8Array> {
  for (const part of parts) yield typeof part === "string" ? new TextEncoder().encode(part) : part;
}

async function collect(stream: AsyncIterable<Uint8Array>, max = 1024): Promise<string[]> {
  const lines: string[] = [];
  for await (const line of ndjsonLines(stream, max)) lines.push(line);
  return lines;
}

describe("ndjsonLines", () => {
  it("splits lines across chunk edges, skips blank lines and keeps a last line without newline", async () => {
    await expect(collect(chunks('{"a":', '1}\n\n{"b"', ":2}\r\n", '{"c":3}'))).resolves.toEqual(['{"a":1}', '{"b":2}', '{"c":3}']);
  });

  it("decodes a character split between chunks", async () => {
    const bytes = new TextEncoder().encode('"café ✓"\n');
    await expect(collect(chunks(bytes.subarray(0, 5), bytes.subarray(5, 9), bytes.subarray(9)))).resolves.toEqual(['"café ✓"']);
  });

  it("refuses a line that outgrows the limit", async () => {
    await expect(collect(chunks("x".repeat(600), "y".repeat(600)), 1000)).rejects.toBeInstanceOf(LineTooLongError);
  });
});
