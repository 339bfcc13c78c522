import type { Socket } from "node:net";
import { encodeFrame, FrameDecoder } from "@pedelec/protocol/frame-codec";
import { MAX_CORE_FRAME_BYTES } from "@pedelec/protocol/core-frame-limit";
import { coreRequestFrameSchema, type CoreRequestFrame } from "@pedelec/protocol/core-request-frame";
import type { CoreServerFrame } from "@pedelec/protocol/core-wire";
import { summarizeIssues } from "@pedelec/protocol/issue-summary";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { TransportListeners, type MessageTransport } from "@pedelec/protocol/transport";
import type { PendingFrameBytes } from "./connection-limits.js";
import { log } from "./logger.js";

export interface ClientConnectionOptions {
  /** How long a frame may take from its first byte to its last. */
  incompleteFrameTimeoutMs: number;
  /** Shared by all of Core's connections: what their unfinished frames hold together. */
  pendingFrameBytes: PendingFrameBytes;
}

/** Connections this Core has served, counting the current one: its id. Claims never outlive Core, nor need ids that do. */
let connectionCount = 0;

/**
 * One client of Core (a native host, a pedelec-cli run, the pedelec command): the server end of the socket as the
 * protocol's MessageTransport (checked request frames in, server frames out), and the sessions it follows. A
 * malformed frame, or a frame left unfinished too long, closes this connection only; a request that is well framed
 * but invalid (a wrong shape, a payload nested too deep) gets an INVALID_INPUT answer and the connection lives on.
 */
export class CoreClientConnection implements MessageTransport<CoreRequestFrame, CoreServerFrame> {
  /** Names this connection where its clients' claims are kept (see connectionClaimant); unique in this Core process. */
  readonly id = `connection-${++connectionCount}`;
  readonly subscriptions = new Set<string>();
  readonly #decoder = new FrameDecoder(MAX_CORE_FRAME_BYTES);
  readonly #closed = new AbortController();
  /** What this connection's unfinished frame adds to the shared total right now. */
  #heldBytes = 0;
  #frameTimer: NodeJS.Timeout | undefined;
  /** Set once Core has given up on this client; bytes that still arrive are ignored. */
  #refused = false;
  readonly #listeners = new TransportListeners<CoreRequestFrame>();

  constructor(
    private readonly socket: Socket,
    private readonly options: ClientConnectionOptions,
  ) {
    socket.on("data", (chunk: Buffer) => this.#onData(chunk));
    socket.on("close", () => {
      this.#release();
      const reason = new PedelecError("IPC_UNAVAILABLE", "the client disconnected");
      this.#closed.abort(reason);
      this.#listeners.close(reason);
    });
    socket.on("error", (error) => log("warn", "client socket error", { error: error.message }));
  }

  /** Every request frame that passed the protocol's frame schema, in arrival order. */
  onMessage(listener: (frame: CoreRequestFrame) => void): () => void {
    return this.#listeners.onMessage(listener);
  }

  /** Once, when the socket is gone (the client left, or Core closed or refused it). */
  onClose(listener: (error?: Error) => void): () => void {
    return this.#listeners.onClose(listener);
  }

  /** Aborts when the client goes away (e.g. an agent's pedelec-cli was killed mid tool call). */
  get closedSignal(): AbortSignal {
    return this.#closed.signal;
  }

  send(frame: CoreServerFrame): void {
    if (this.#closed.signal.aborted || this.socket.destroyed) return;
    let bytes: Buffer;
    try {
      bytes = encodeFrame(frame, MAX_CORE_FRAME_BYTES);
    } catch (error) {
      if (frame.kind !== "response") {
        log("warn", "dropped an oversized frame", { kind: frame.kind });
        return;
      }
      const tooLarge = PedelecError.from(error, "MESSAGE_TOO_LARGE");
      bytes = encodeFrame({ kind: "response", id: frame.id, ok: false, error: tooLarge.toWire() }, MAX_CORE_FRAME_BYTES);
    }
    this.socket.write(bytes);
  }

  /** Tells the client why with a fatal frame, then closes: the stream is broken or the client is over a limit. */
  refuse(error: PedelecError): void {
    if (this.#refused) return;
    this.#refused = true;
    this.#release();
    this.send({ kind: "fatal", error: error.toWire() });
    this.socket.end();
    this.socket.destroySoon();
  }

  close(): void {
    this.socket.destroy();
  }

  #onData(chunk: Buffer): void {
    if (this.#refused) return;
    const decodedFrames = this.#decoder.push(chunk);
    for (const decoded of decodedFrames) {
      if (!decoded.ok) {
        this.refuse(decoded.error);
        return;
      }
      this.#handle(decoded.message);
      if (this.#refused) return;
    }
    this.#trackUnfinishedFrame(decodedFrames.length > 0);
  }

  #handle(message: unknown): void {
    // The frame schema bounds the payload's depth and size before anything walks it recursively.
    const parsed = coreRequestFrameSchema.safeParse(message);
    if (parsed.success) {
      this.#listeners.deliver(parsed.data);
      return;
    }
    // A frame with a usable id gets an answer and the connection lives on; anything else cannot be answered.
    const id = (message as { id?: unknown } | null)?.id;
    const summary = summarizeIssues(parsed.error.issues);
    const error = new PedelecError("INVALID_INPUT", `the frame does not match the Core protocol: ${summary.message}`, summary.details);
    if (typeof id === "string" && id.length > 0 && id.length <= 128) {
      this.send({ kind: "response", id, ok: false, error: error.toWire() });
    } else {
      this.refuse(error);
    }
  }

  /** Counts the unfinished frame in the shared total and gives it a deadline, renewed whenever a frame completes. */
  #trackUnfinishedFrame(completedAFrame: boolean): void {
    const held = this.#decoder.pendingBytes;
    const withinLimit = this.options.pendingFrameBytes.change(held - this.#heldBytes);
    this.#heldBytes = held;
    if (!withinLimit) {
      const limit = this.options.pendingFrameBytes.limit;
      this.refuse(new PedelecError("IPC_UNAVAILABLE", `Core is already holding ${limit} bytes of unfinished frames; try again shortly`));
      return;
    }
    if (held === 0 || completedAFrame) {
      clearTimeout(this.#frameTimer);
      this.#frameTimer = undefined;
    }
    if (held > 0 && this.#frameTimer === undefined) {
      const timeoutMs = this.options.incompleteFrameTimeoutMs;
      this.#frameTimer = setTimeout(() => {
        log("warn", "closed a connection that left a frame unfinished", { timeoutMs, heldBytes: this.#heldBytes });
        this.refuse(new PedelecError("IPC_UNAVAILABLE", `a frame was left unfinished for ${timeoutMs} ms; closing the connection`));
      }, timeoutMs);
      this.#frameTimer.unref();
    }
  }

  #release(): void {
    clearTimeout(this.#frameTimer);
    this.#frameTimer = undefined;
    this.options.pendingFrameBytes.change(-this.#heldBytes);
    this.#heldBytes = 0;
  }
}
