import { PedelecError } from "./pedelec-error.js";

/**
 * Length-prefixed JSON frames over a byte stream (Node only). Chrome Native Messaging uses a 4-byte
 * little-endian length; the Core socket uses the same layout so one codec serves both hops.
 */
export function encodeFrame(message: unknown, maxBytes: number): Buffer {
  return encodeJsonFrame(JSON.stringify(message), maxBytes);
}

/** Frames text that is already JSON (e.g. a chunk produced by splitIntoChunks). */
export function encodeJsonFrame(json: string, maxBytes: number): Buffer {
  const body = Buffer.from(json, "utf8");
  if (body.byteLength > maxBytes) {
    throw new PedelecError("MESSAGE_TOO_LARGE", `message of ${body.byteLength} bytes exceeds the ${maxBytes}-byte limit`);
  }
  const header = Buffer.allocUnsafe(4);
  header.writeUInt32LE(body.byteLength, 0);
  return Buffer.concat([header, body]);
}

export type DecodedFrame = { ok: true; message: unknown } | { ok: false; error: PedelecError };

/**
 * Incremental decoder: push bytes as they arrive, get whole frames back. An oversized length or a body that
 * is not JSON yields an error entry; after an error the stream cannot be trusted, so the decoder stops.
 */
export class FrameDecoder {
  #buffer: Buffer = Buffer.alloc(0);
  #failed = false;

  constructor(private readonly maxBytes: number) {}

  push(chunk: Buffer): DecodedFrame[] {
    if (this.#failed) return [];
    this.#buffer = this.#buffer.length === 0 ? chunk : Buffer.concat([this.#buffer, chunk]);
    const frames: DecodedFrame[] = [];
    while (this.#buffer.length >= 4) {
      const length = this.#buffer.readUInt32LE(0);
      if (length > this.maxBytes) {
        this.#fail();
        frames.push({
          ok: false,
          error: new PedelecError("MESSAGE_TOO_LARGE", `frame of ${length} bytes exceeds the ${this.maxBytes}-byte limit`),
        });
        return frames;
      }
      if (this.#buffer.length < 4 + length) break;
      const body = this.#buffer.subarray(4, 4 + length);
      this.#buffer = this.#buffer.subarray(4 + length);
      try {
        frames.push({ ok: true, message: JSON.parse(body.toString("utf8")) as unknown });
      } catch {
        this.#fail();
        frames.push({ ok: false, error: new PedelecError("INVALID_INPUT", "frame body is not valid UTF-8 JSON") });
        return frames;
      }
    }
    return frames;
  }

  /** Bytes of an unfinished frame still buffered (non-zero at EOF means the peer cut a frame short). */
  get pendingBytes(): number {
    return this.#buffer.length;
  }

  #fail(): void {
    this.#failed = true;
    this.#buffer = Buffer.alloc(0);
  }
}
