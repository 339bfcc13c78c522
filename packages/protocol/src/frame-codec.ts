import { ByteQueue } from "./byte-queue.js";
import { clipText } from "./issue-summary.js";
import { PedelecError } from "./pedelec-error.js";

// `fatal` makes invalid UTF-8 an error instead of U+FFFD; `ignoreBOM` keeps a byte-order mark, which JSON then refuses.
const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/**
 * Length-prefixed JSON frames over a byte stream (Node only). Chrome Native Messaging uses a 4-byte
 * little-endian length; the Core socket uses the same layout so one codec serves both hops.
 */
export function encodeFrame(message: unknown, maxBytes: number): Buffer {
  return encodeJsonFrame(JSON.stringify(message), maxBytes);
}

/** Frames text that is already JSON (e.g. a chunk produced by splitIntoChunks). */
export function encodeJsonFrame(json: string, maxBytes: number): Buffer {
  const bodyLength = Buffer.byteLength(json, "utf8");
  if (bodyLength > maxBytes) {
    throw new PedelecError("MESSAGE_TOO_LARGE", `message of ${bodyLength} bytes exceeds the ${maxBytes}-byte limit`);
  }
  // Header and body in one allocation: a large message is not copied a second time.
  const frame = Buffer.allocUnsafe(4 + bodyLength);
  frame.writeUInt32LE(bodyLength, 0);
  frame.write(json, 4, "utf8");
  return frame;
}

export type DecodedFrame = { ok: true; message: unknown } | { ok: false; error: PedelecError };

/**
 * Incremental decoder: push bytes as they arrive, get whole frames back. Received bytes are queued as chunks and
 * joined once, when a frame is complete, so decoding is linear in the bytes received however they are split. A
 * declared length over the limit is refused as soon as the 4-byte header is read, before any of the body arrives.
 * A body must be valid UTF-8 (never patched with U+FFFD) and JSON. After an error the stream cannot be trusted,
 * so the decoder drops what it holds and stops.
 */
export class FrameDecoder {
  readonly #queue = new ByteQueue();
  /** Body length of the frame being read, once its header is in. */
  #bodyLength: number | undefined;
  #failed = false;

  constructor(private readonly maxBytes: number) {}

  push(chunk: Buffer): DecodedFrame[] {
    if (this.#failed) return [];
    this.#queue.push(chunk);
    const frames: DecodedFrame[] = [];
    for (;;) {
      if (this.#bodyLength === undefined) {
        if (this.#queue.length < 4) break;
        const length = this.#queue.take(4).readUInt32LE(0);
        if (length > this.maxBytes) {
          return this.#fail(frames, new PedelecError("MESSAGE_TOO_LARGE", `frame of ${length} bytes exceeds the ${this.maxBytes}-byte limit`));
        }
        this.#bodyLength = length;
      }
      if (this.#queue.length < this.#bodyLength) break;
      const body = this.#queue.take(this.#bodyLength);
      this.#bodyLength = undefined;
      let text: string;
      try {
        text = utf8.decode(body);
      } catch (error) {
        return this.#fail(frames, new PedelecError("INVALID_INPUT", `frame body is not valid UTF-8: ${(error as Error).message}`));
      }
      try {
        frames.push({ ok: true, message: JSON.parse(text) as unknown });
      } catch (error) {
        // V8 quotes at most a few characters of the input here, so the message stays short.
        return this.#fail(frames, new PedelecError("INVALID_INPUT", `frame body is not JSON: ${clipText((error as Error).message, 120)}`));
      }
    }
    return frames;
  }

  /** Bytes of an unfinished frame held so far, header included (non-zero at EOF means the peer cut a frame short). */
  get pendingBytes(): number {
    return this.#queue.length + (this.#bodyLength === undefined ? 0 : 4);
  }

  #fail(frames: DecodedFrame[], error: PedelecError): DecodedFrame[] {
    this.#failed = true;
    this.#queue.clear();
    this.#bodyLength = undefined;
    frames.push({ ok: false, error });
    return frames;
  }
}
