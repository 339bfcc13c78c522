/** Chunks smaller than this are copied into a shared block, so a peer sending tiny pieces costs no per-piece overhead. */
const SMALL_CHUNK_BYTES = 16 * 1024;
const BLOCK_BYTES = 64 * 1024;
/** Consumed list slots are dropped in one go once there are this many, keeping `take` free of per-call shifting. */
const COMPACT_AFTER = 1024;
const EMPTY = Buffer.alloc(0);

/**
 * Bytes received from a stream, kept as a list of chunks (Node only). Pushing never copies a large chunk, and
 * taking copies only a run that spans chunks, once, so both stay linear in the bytes involved, whatever the chunk
 * sizes.
 */
export class ByteQueue {
  #chunks: Buffer[] = [];
  /** Index of the first chunk still queued. */
  #head = 0;
  #length = 0;
  /** Where small chunks are copied; bytes are only ever appended at #blockEnd, never overwritten. */
  #block: Buffer | undefined;
  #blockEnd = 0;

  get length(): number {
    return this.#length;
  }

  push(chunk: Buffer): void {
    if (chunk.length === 0) return;
    this.#length += chunk.length;
    if (chunk.length >= SMALL_CHUNK_BYTES) {
      this.#chunks.push(chunk);
      return;
    }
    let offset = 0;
    while (offset < chunk.length) {
      if (this.#block === undefined || this.#blockEnd === this.#block.length) {
        this.#block = Buffer.allocUnsafe(BLOCK_BYTES);
        this.#blockEnd = 0;
      }
      const start = this.#blockEnd;
      const copied = chunk.copy(this.#block, start, offset);
      this.#blockEnd += copied;
      offset += copied;
      this.#appendBlockRange(this.#block, start, this.#blockEnd);
    }
  }

  /** Removes and returns the first `count` bytes; they are copied only if they span several chunks. */
  take(count: number): Buffer {
    if (count > this.#length) throw new RangeError(`cannot take ${count} of ${this.#length} queued bytes`);
    if (count === 0) return Buffer.alloc(0);
    this.#length -= count;
    const first = this.#chunks[this.#head]!;
    if (first.length >= count) {
      this.#consumeHead(first, count);
      return first.subarray(0, count);
    }
    const result = Buffer.allocUnsafe(count);
    let filled = 0;
    while (filled < count) {
      const chunk = this.#chunks[this.#head]!;
      const used = Math.min(chunk.length, count - filled);
      chunk.copy(result, filled, 0, used);
      filled += used;
      this.#consumeHead(chunk, used);
    }
    return result;
  }

  /** Drops everything (after a stream error). */
  clear(): void {
    this.#chunks = [];
    this.#head = 0;
    this.#length = 0;
    this.#block = undefined;
    this.#blockEnd = 0;
  }

  /** Grows the last queued chunk when it ends where the new bytes start, so small pieces merge into one view. */
  #appendBlockRange(block: Buffer, start: number, end: number): void {
    const last = this.#chunks.length > this.#head ? this.#chunks[this.#chunks.length - 1]! : undefined;
    if (last !== undefined && last.buffer === block.buffer && last.byteOffset + last.length === block.byteOffset + start) {
      this.#chunks[this.#chunks.length - 1] = block.subarray(last.byteOffset - block.byteOffset, end);
    } else {
      this.#chunks.push(block.subarray(start, end));
    }
  }

  #consumeHead(chunk: Buffer, used: number): void {
    if (used < chunk.length) {
      this.#chunks[this.#head] = chunk.subarray(used);
      return;
    }
    // Release the consumed chunk now; the slot itself goes at the next compaction.
    this.#chunks[this.#head] = EMPTY;
    this.#head += 1;
    if (this.#head === this.#chunks.length) {
      this.#chunks = [];
      this.#head = 0;
    } else if (this.#head >= COMPACT_AFTER && this.#head * 2 >= this.#chunks.length) {
      this.#chunks = this.#chunks.slice(this.#head);
      this.#head = 0;
    }
  }
}
