import { connect, type Socket } from "node:net";
import { randomUUID } from "node:crypto";
import { encodeFrame, FrameDecoder } from "@pedelec/protocol/frame-codec";
import { MAX_CORE_FRAME_BYTES, coreServerFrameSchema, type CoreRequestFrame, type CoreServerFrame } from "@pedelec/protocol/core-wire";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { coreRequestSchemas, type CoreRequestType, type RequestPayload, type RequestResult } from "@pedelec/protocol/requests";

/**
 * A connection to Core over its local socket: raw frames for forwarders (the native host) and typed
 * requests for local programs (pedelec, pedelec-cli).
 */
export class CoreConnection {
  readonly #socket: Socket;
  readonly #decoder = new FrameDecoder(MAX_CORE_FRAME_BYTES);
  readonly #pending = new Map<string, { resolve: (value: unknown) => void; reject: (error: PedelecError) => void }>();
  readonly #frameListeners = new Set<(frame: CoreServerFrame) => void>();
  readonly #closeListeners = new Set<(error?: PedelecError) => void>();
  #closed = false;
  /** Why the connection is closing, when we know better than "closed" (a fatal frame, a bad frame). */
  #closeError: PedelecError | undefined;

  private constructor(socket: Socket) {
    this.#socket = socket;
    socket.on("data", (chunk: Buffer) => this.#onData(chunk));
    socket.on("close", () => this.#onClose());
    socket.on("error", () => {
      // "close" follows; pending requests are failed there.
    });
  }

  /** Connects, or rejects with IPC_UNAVAILABLE (details.cause is the socket error code, e.g. ENOENT). */
  static open(socketPath: string, signal?: AbortSignal): Promise<CoreConnection> {
    return new Promise((resolvePromise, rejectPromise) => {
      const socket = connect(socketPath);
      const onAbort = (): void => {
        socket.destroy();
        rejectPromise(new PedelecError("IPC_UNAVAILABLE", "connecting to Pedelec Core was cancelled"));
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      socket.once("connect", () => {
        signal?.removeEventListener("abort", onAbort);
        resolvePromise(new CoreConnection(socket));
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
    return this.#closed;
  }

  /** Sends a frame as is (the native host forwards the extension's frames verbatim). */
  sendFrame(frame: CoreRequestFrame): void {
    if (this.#closed) throw new PedelecError("IPC_UNAVAILABLE", "the connection to Pedelec Core is closed");
    this.#socket.write(encodeFrame(frame, MAX_CORE_FRAME_BYTES));
  }

  /** A typed request; the result is validated against the protocol's result schema. */
  async request<T extends CoreRequestType>(type: T, payload: RequestPayload<T>, origin?: string): Promise<RequestResult<T>> {
    const id = randomUUID();
    const frame: CoreRequestFrame = { kind: "request", id, type, payload, ...(origin ? { origin } : {}) };
    const raw = await new Promise<unknown>((resolvePromise, rejectPromise) => {
      this.#pending.set(id, { resolve: resolvePromise, reject: rejectPromise });
      try {
        this.sendFrame(frame);
      } catch (error) {
        this.#pending.delete(id);
        rejectPromise(PedelecError.from(error, "IPC_UNAVAILABLE"));
      }
    });
    const parsed = coreRequestSchemas[type].result.safeParse(raw);
    if (!parsed.success) {
      throw new PedelecError("SDK_PROTOCOL_ERROR", `Core answered ${type} with an invalid result`, parsed.error.issues);
    }
    return parsed.data as RequestResult<T>;
  }

  onFrame(listener: (frame: CoreServerFrame) => void): () => void {
    this.#frameListeners.add(listener);
    return () => this.#frameListeners.delete(listener);
  }

  onClose(listener: (error?: PedelecError) => void): () => void {
    this.#closeListeners.add(listener);
    return () => this.#closeListeners.delete(listener);
  }

  close(): void {
    this.#socket.end();
    this.#socket.destroySoon();
  }

  #onData(chunk: Buffer): void {
    for (const decoded of this.#decoder.push(chunk)) {
      if (!decoded.ok) {
        this.#fail(decoded.error);
        return;
      }
      const parsed = coreServerFrameSchema.safeParse(decoded.message);
      if (!parsed.success) {
        this.#fail(new PedelecError("SDK_PROTOCOL_ERROR", "Core sent a frame that does not match the protocol", parsed.error.issues));
        return;
      }
      this.#dispatch(parsed.data);
    }
  }

  #dispatch(frame: CoreServerFrame): void {
    if (frame.kind === "response") {
      const pending = this.#pending.get(frame.id);
      if (pending) {
        this.#pending.delete(frame.id);
        if (frame.ok) pending.resolve(frame.result);
        else pending.reject(PedelecError.fromWire(frame.error));
      }
    } else if (frame.kind === "fatal") {
      this.#closeError = PedelecError.fromWire(frame.error);
    }
    for (const listener of this.#frameListeners) listener(frame);
  }

  #fail(error: PedelecError): void {
    this.#closeError = error;
    this.#socket.destroy();
  }

  #onClose(): void {
    if (this.#closed) return;
    this.#closed = true;
    const error = this.#closeError ?? new PedelecError("IPC_UNAVAILABLE", "the connection to Pedelec Core closed");
    for (const pending of this.#pending.values()) pending.reject(error);
    this.#pending.clear();
    for (const listener of this.#closeListeners) listener(this.#closeError);
  }
}
