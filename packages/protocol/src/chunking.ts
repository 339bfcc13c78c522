import type { ChunkFrame } from "./native-wire.js";
import { PedelecError } from "./pedelec-error.js";

const encoder = new TextEncoder();

function utf8Length(text: string): number {
  return encoder.encode(text).byteLength;
}

/**
 * Serializes `message`; if the JSON is larger than `maxBytes`, splits it into chunk frames that each
 * serialize to at most `maxBytes`. Splitting is by string slices, measured after JSON escaping, so a
 * message full of quotes or control characters still fits.
 */
export function splitIntoChunks(message: unknown, maxBytes: number, chunkId: string): string[] {
  const json = JSON.stringify(message);
  if (utf8Length(json) <= maxBytes) return [json];
  const pieces: string[] = [];
  let offset = 0;
  // Room for the frame's own fields; the data budget is then halved until the escaped slice fits.
  const overhead = 200;
  while (offset < json.length) {
    let length = Math.min(json.length - offset, maxBytes - overhead);
    while (utf8Length(JSON.stringify(json.slice(offset, offset + length))) > maxBytes - overhead) {
      length = Math.floor(length / 2);
      if (length === 0) throw new PedelecError("MESSAGE_TOO_LARGE", "chunk budget is too small");
    }
    pieces.push(json.slice(offset, offset + length));
    offset += length;
  }
  return pieces.map((data, index) =>
    JSON.stringify({ kind: "chunk", chunkId, index, count: pieces.length, data } satisfies ChunkFrame),
  );
}

/** Reassembles chunk frames. Returns the parsed message once the last piece arrives, otherwise undefined. */
export class ChunkAssembler {
  readonly #pending = new Map<string, { count: number; pieces: (string | undefined)[]; received: number; bytes: number }>();

  constructor(private readonly maxMessageBytes: number) {}

  add(frame: ChunkFrame): unknown {
    let entry = this.#pending.get(frame.chunkId);
    if (!entry) {
      entry = { count: frame.count, pieces: new Array<string | undefined>(frame.count), received: 0, bytes: 0 };
      this.#pending.set(frame.chunkId, entry);
    }
    if (frame.count !== entry.count || frame.index >= entry.count || entry.pieces[frame.index] !== undefined) {
      this.#pending.delete(frame.chunkId);
      throw new PedelecError("SDK_PROTOCOL_ERROR", `inconsistent chunk ${frame.index}/${frame.count} of ${frame.chunkId}`);
    }
    entry.pieces[frame.index] = frame.data;
    entry.received += 1;
    entry.bytes += frame.data.length;
    if (entry.bytes > this.maxMessageBytes) {
      this.#pending.delete(frame.chunkId);
      throw new PedelecError("MESSAGE_TOO_LARGE", `chunked message ${frame.chunkId} exceeds ${this.maxMessageBytes} bytes`);
    }
    if (entry.received < entry.count) return undefined;
    this.#pending.delete(frame.chunkId);
    try {
      return JSON.parse(entry.pieces.join("")) as unknown;
    } catch {
      throw new PedelecError("SDK_PROTOCOL_ERROR", `chunked message ${frame.chunkId} is not valid JSON`);
    }
  }

  /** Drops partial messages, e.g. when the link closes. */
  clear(): void {
    this.#pending.clear();
  }
}
