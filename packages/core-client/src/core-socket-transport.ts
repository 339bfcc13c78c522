import type { Socket } from "node:net";
import type { CoreRequestFrame } from "@pedelec/protocol/core-wire";
import { MAX_CORE_FRAME_BYTES } from "@pedelec/protocol/core-frame-limit";
import { encodeFrame, FrameDecoder } from "@pedelec/protocol/frame-codec";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { TransportListeners, type MessageTransport } from "@pedelec/protocol/transport";

/**
 * The client end of Core's local socket as a MessageTransport: length-prefixed JSON frames (16 MiB each at most).
 * Messages arrive decoded but unchecked; the reader on top validates them. A frame that cannot be decoded (too
 * large, not UTF-8, not JSON) leaves the byte stream out of step, so the connection closes with that error.
 */
export class CoreSocketTransport implements MessageTransport<unknown, CoreRequestFrame> {
  readonly #socket: Socket;
  readonly #decoder = new FrameDecoder(MAX_CORE_FRAME_BYTES);
  readonly #listeners = new TransportListeners<unknown>();
  /** Why the connection ends, when something broke it rather than a plain close. */
  #failure: PedelecError | undefined;

  private constructor(socket: Socket) {
    this.#socket = socket;
    socket.on("data", (chunk: Buffer) => this.#receive(chunk));
    socket.on("error", (error: NodeJS.ErrnoException) => {
      this.#failure ??= new PedelecError("IPC_UNAVAILABLE", `the connection to Pedelec Core failed: ${error.message}`, { cause: error.code ?? null });
    });
    socket.on("close", () => this.#listeners.close(this.#failure));
  }

  /** Connects, or rejects with IPC_UNAVAILABLE (details.cause is the socket error code, e.g. ENOENT). */
  static async open(socketPath: string, signal?: AbortSignal): Promise<CoreSocketTransport> {
    // Loaded on first use: node:net and the streams under it are a good part of a short command's start-up.
    const { connect } = await import("node:net");
    return new Promise((resolvePromise, rejectPromise) => {
      if (signal?.aborted) {
        rejectPromise(new PedelecError("IPC_UNAVAILABLE", "connecting to Pedelec Core was cancelled"));
        return;
      }
      const socket = connect(socketPath);
      const onAbort = (): void => {
        socket.destroy();
        rejectPromise(new PedelecError("IPC_UNAVAILABLE", "connecting to Pedelec Core was cancelled"));
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      socket.once("connect", () => {
        signal?.removeEventListener("abort", onAbort);
        socket.removeAllListeners("error");
        resolvePromise(new CoreSocketTransport(socket));
      });
      socket.once("error", (error: NodeJS.ErrnoException) => {
        signal?.removeEventListener("abort", onAbort);
        rejectPromise(
          new PedelecError("IPC_UNAVAILABLE", `Pedelec Core is not reachable at ${socketPath}: ${error.message}`, {
            cause: error.code ?? null,
          }),
        );
      });
    });
  }

  get closed(): boolean {
    return this.#listeners.closed;
  }

  /** Throws MESSAGE_TOO_LARGE for a frame over the limit (the connection lives on), IPC_UNAVAILABLE once closed. */
  send(frame: CoreRequestFrame): void {
    if (this.#listeners.closed || this.#socket.destroyed) throw new PedelecError("IPC_UNAVAILABLE", "the connection to Pedelec Core is closed");
    this.#socket.write(encodeFrame(frame, MAX_CORE_FRAME_BYTES));
  }

  /** Ends the connection once what was written is flushed; close listeners hear of it when the socket is gone. */
  close(): void {
    this.#socket.end();
    this.#socket.destroySoon();
  }

  onMessage(listener: (message: unknown) => void): () => void {
    return this.#listeners.onMessage(listener);
  }

  onClose(listener: (error?: Error) => void): () => void {
    return this.#listeners.onClose(listener);
  }

  #receive(chunk: Buffer): void {
    for (const decoded of this.#decoder.push(chunk)) {
      if (this.#listeners.closed) return;
      if (!decoded.ok) {
        this.#failure = decoded.error;
        this.#socket.destroy();
        return;
      }
      this.#listeners.deliver(decoded.message);
    }
  }
}
