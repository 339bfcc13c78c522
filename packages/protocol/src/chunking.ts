import { chunkFrameSchema, type ChunkFrame } from "./native-wire.js";
import { PedelecError } from "./pedelec-error.js";
import { summarizeIssues } from "./issue-summary.js";
import type { MessageTransport } from "./transport.js";

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
  return pieces.map((data, index) => JSON.stringify({ kind: "chunk", chunkId, index, count: pieces.length, data } satisfies ChunkFrame));
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

export interface SplittingOptions {
  /** Largest frame the inner transport may send, in UTF-8 bytes of JSON. */
  maxBytes: number;
  /** A fresh id for the pieces of one message. */
  createChunkId: () => string;
}

/**
 * The sending side of chunking as a transport: every message goes to `inner` as JSON text, split into chunk frames
 * when it is larger than `maxBytes` (Chrome caps a message from the native host at 1 MiB). What arrives passes through.
 */
export function splittingTransport<Incoming>(
  inner: MessageTransport<Incoming, string>,
  options: SplittingOptions,
): MessageTransport<Incoming, unknown> {
  return {
    send(message) {
      for (const json of splitIntoChunks(message, options.maxBytes, options.createChunkId())) inner.send(json);
    },
    close: () => inner.close(),
    onMessage: (listener) => inner.onMessage(listener),
    onClose: (listener) => inner.onClose(listener),
  };
}

export interface ReassemblyOptions {
  /** Cap for one reassembled message. */
  maxMessageBytes: number;
  /** A piece that is not a valid chunk frame, does not fit its message, or overflows the cap; its message is dropped. */
  onDropped: (error: PedelecError) => void;
}

/**
 * The receiving side of chunking as a transport: chunk frames are collected and the reassembled message is delivered
 * in their place; every other message passes through, as does everything sent. Partial messages die with the link.
 */
export function reassemblingTransport<Outgoing>(
  inner: MessageTransport<unknown, Outgoing>,
  options: ReassemblyOptions,
): MessageTransport<unknown, Outgoing> {
  const assembler = new ChunkAssembler(options.maxMessageBytes);
  const listeners = new Set<(message: unknown) => void>();
  const deliver = (message: unknown): void => {
    for (const listener of [...listeners]) listener(message);
  };
  inner.onMessage((message) => {
    if (!isChunkKind(message)) {
      deliver(message);
      return;
    }
    const frame = chunkFrameSchema.safeParse(message);
    if (!frame.success) {
      const summary = summarizeIssues(frame.error.issues);
      options.onDropped(new PedelecError("SDK_PROTOCOL_ERROR", `a chunk frame does not match the protocol: ${summary.message}`, summary.details));
      return;
    }
    let whole: unknown;
    try {
      whole = assembler.add(frame.data);
    } catch (error) {
      options.onDropped(PedelecError.from(error, "SDK_PROTOCOL_ERROR"));
      return;
    }
    if (whole !== undefined) deliver(whole);
  });
  inner.onClose(() => assembler.clear());
  return {
    send: (message) => inner.send(message),
    close: () => inner.close(),
    onMessage(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    onClose: (listener) => inner.onClose(listener),
  };
}

function isChunkKind(message: unknown): boolean {
  return typeof message === "object" && message !== null && (message as { kind?: unknown }).kind === "chunk";
}
