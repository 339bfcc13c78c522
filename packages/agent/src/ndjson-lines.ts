/**
 * Splits a byte stream into text lines as they arrive (NDJSON), decoding UTF-8 across chunk edges. Blank lines are
 * skipped; a last line without a newline is still yielded. A line longer than `maxLineLength` characters throws, so a server that
 * never sends a newline cannot grow memory without bound.
 */
export async function* ndjsonLines(stream: AsyncIterable<Uint8Array>, maxLineLength: number): AsyncGenerator<string> {
  const decoder = new TextDecoder("utf-8");
  let pending = "";
  for await (const chunk of stream) {
    pending += decoder.decode(chunk, { stream: true });
    let newline = pending.indexOf("\n");
    while (newline !== -1) {
      const line = pending.slice(0, newline).trim();
      pending = pending.slice(newline + 1);
      if (line !== "") yield line;
      newline = pending.indexOf("\n");
    }
    if (pending.length > maxLineLength) throw new LineTooLongError(maxLineLength);
  }
  pending += decoder.decode();
  const last = pending.trim();
  if (last !== "") yield last;
}

export class LineTooLongError extends Error {
  constructor(readonly maxLineLength: number) {
    super(`a line of the answer is longer than ${maxLineLength} characters`);
    this.name = "LineTooLongError";
  }
}
