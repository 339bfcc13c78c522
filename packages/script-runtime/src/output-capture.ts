import type { Readable } from "node:stream";

/**
 * Keeps the first `capBytes` of one output stream, hands exactly those bytes to `onChunk` as they arrive, and drains
 * and drops the rest so the writer never blocks on a full pipe.
 */
export class OutputCapture {
  readonly #chunks: Buffer[] = [];
  #kept = 0;
  truncated = false;
  error: string | undefined;
  readonly done: Promise<void>;

  constructor(stream: Readable, capBytes: number, onChunk?: (chunk: Buffer) => void) {
    this.done = new Promise((resolve) => {
      stream.on("data", (chunk: Buffer) => {
        const room = capBytes - this.#kept;
        if (room <= 0) {
          this.truncated = true;
          return;
        }
        const kept = chunk.length > room ? chunk.subarray(0, room) : chunk;
        if (kept.length < chunk.length) this.truncated = true;
        this.#chunks.push(kept);
        this.#kept += kept.length;
        if (onChunk !== undefined) {
          try {
            onChunk(kept);
          } catch (error) {
            this.error ??= `the output listener threw: ${(error as Error).message}`;
          }
        }
      });
      stream.on("error", (error) => {
        this.error ??= `reading the script's output failed: ${error.message}`;
        resolve();
      });
      stream.on("close", () => resolve());
      stream.on("end", () => resolve());
    });
  }

  /** The kept bytes decoded as UTF-8. */
  text(): string {
    return Buffer.concat(this.#chunks, this.#kept).toString("utf8");
  }
}
