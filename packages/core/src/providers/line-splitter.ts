/** Options of a {@link LineSplitter}. */
export interface LineSplitterOptions {
  /** Longest line kept, in bytes (without its newline). Longer lines are dropped whole. */
  maxLineBytes: number;
  /** Receives each complete line, decoded as UTF-8, without its `\n` and without a trailing `\r`. */
  onLine: (line: string) => void;
  /** Told about a dropped line and how many bytes it had (counted up to its end). */
  onLineDropped: (byteLength: number) => void;
}

/**
 * Splits a byte stream into lines with a hard memory bound: a line that grows past `maxLineBytes`
 * is discarded as it arrives, never buffered to its end.
 */
export class LineSplitter {
  readonly #options: LineSplitterOptions;
  #pieces: Buffer[] = [];
  #pendingBytes = 0;
  #discarding = false;
  #discardedBytes = 0;

  constructor(options: LineSplitterOptions) {
    this.#options = options;
  }

  push(chunk: Buffer): void {
    let start = 0;
    while (start < chunk.length) {
      const newline = chunk.indexOf(0x0a, start);
      if (newline === -1) {
        this.#append(chunk.subarray(start));
        return;
      }
      if (this.#pendingBytes === 0 && !this.#discarding) {
        // The common case, a whole line inside one chunk: decoded straight from the chunk, with no copy of its bytes.
        if (newline - start > this.#options.maxLineBytes) this.#options.onLineDropped(newline - start);
        else this.#emit(chunk.toString("utf8", start, newline));
      } else {
        this.#append(chunk.subarray(start, newline));
        this.#finishLine();
      }
      start = newline + 1;
    }
  }

  /** Flushes a last line that had no newline. */
  end(): void {
    if (this.#discarding || this.#pendingBytes > 0) this.#finishLine();
  }

  #append(bytes: Buffer): void {
    if (bytes.length === 0) return;
    if (this.#discarding) {
      this.#discardedBytes += bytes.length;
      return;
    }
    if (this.#pendingBytes + bytes.length > this.#options.maxLineBytes) {
      this.#discarding = true;
      this.#discardedBytes = this.#pendingBytes + bytes.length;
      this.#pieces = [];
      this.#pendingBytes = 0;
      return;
    }
    this.#pieces.push(bytes);
    this.#pendingBytes += bytes.length;
  }

  #finishLine(): void {
    if (this.#discarding) {
      const dropped = this.#discardedBytes;
      this.#discarding = false;
      this.#discardedBytes = 0;
      this.#options.onLineDropped(dropped);
      return;
    }
    // Decoding whole lines (not chunks) keeps multi-byte characters that straddle chunks intact.
    const line = Buffer.concat(this.#pieces, this.#pendingBytes).toString("utf8");
    this.#pieces = [];
    this.#pendingBytes = 0;
    this.#emit(line);
  }

  #emit(line: string): void {
    this.#options.onLine(line.endsWith("\r") ? line.slice(0, -1) : line);
  }
}
