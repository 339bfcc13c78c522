import { coreServerFrameSchema, type CoreRequestFrame, type CoreServerFrame } from "@pedelec/protocol/core-wire";
import { summarizeIssues } from "@pedelec/protocol/issue-summary";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { RequestClient, type ReadMessage } from "@pedelec/protocol/request-client";
import { coreRequestSchemas, type CoreRequestType, type RequestPayload, type RequestResult } from "@pedelec/protocol/requests";
import { protocolVersionMismatch } from "@pedelec/protocol/protocol-mismatch";
import { PROTOCOL_VERSION, type ProtocolPart } from "@pedelec/protocol/protocol-version";
import { CoreSocketTransport } from "./core-socket-transport.js";

export interface CoreConnectionOptions {
  /** The part this connection speaks for (the native host): it then states its protocol version first. */
  part?: ProtocolPart;
}

/**
 * A connection to Core over its local socket: raw frames for forwarders (the native host) and typed requests for
 * local programs (pedelec, pedelec-agent, pedelec-ts-runtime). Every frame from Core is checked against the
 * protocol's schema; one that does not match closes the connection, a result that does not match fails its request.
 */
export class CoreConnection {
  readonly #transport: CoreSocketTransport;
  readonly #client: RequestClient<CoreRequestFrame, CoreServerFrame>;
  readonly #frameListeners = new Set<(frame: CoreServerFrame) => void>();
  readonly #closeListeners = new Set<(error?: PedelecError) => void>();
  /** Why the connection is closing, when we know better than "closed" (a fatal frame, a bad frame). */
  #closeError: PedelecError | undefined;

  private constructor(transport: CoreSocketTransport) {
    this.#transport = transport;
    this.#client = new RequestClient<CoreRequestFrame, CoreServerFrame>({
      transport,
      read: readCoreServerFrame,
      onMessage: (frame) => {
        for (const listener of [...this.#frameListeners]) listener(frame);
        // Core sends a fatal frame right before it gives up on the connection: that is why it ends.
        if (frame.kind === "fatal") {
          this.#closeError = PedelecError.fromWire(frame.error);
          this.#client.close(this.#closeError);
        }
      },
      closeError: (cause) => {
        this.#closeError ??= cause instanceof PedelecError ? cause : undefined;
        return this.#closeError ?? new PedelecError("IPC_UNAVAILABLE", "the connection to Pedelec Core closed");
      },
      abortCode: "IPC_UNAVAILABLE",
      // A frame that breaks the protocol means the two ends no longer agree; a wrong result concerns one request.
      malformedMessage: "close-connection",
      malformedReply: "keep-connection",
    });
    this.#client.onClose(() => {
      for (const listener of [...this.#closeListeners]) listener(this.#closeError);
    });
  }

  /**
   * Connects, or rejects with IPC_UNAVAILABLE (details.cause is the socket error code, e.g. ENOENT). With `part`, the
   * connection says hello first (see `#sayHello`); without it, it states nothing, as Core's own commands do.
   */
  static async open(socketPath: string, signal?: AbortSignal, options: CoreConnectionOptions = {}): Promise<CoreConnection> {
    const connection = new CoreConnection(await CoreSocketTransport.open(socketPath, signal));
    if (options.part !== undefined) connection.#sayHello(options.part);
    return connection;
  }

  /**
   * States this side's protocol version as the connection's first request, without waiting for the answer: Core answers
   * it before reading what follows. A Core that cannot talk to us fails it with PROTOCOL_VERSION_MISMATCH (and closes);
   * a Core that answers with a version we cannot talk to is closed here with the same code. A Core older than the
   * handshake does not know the request, and is served as before.
   */
  #sayHello(part: ProtocolPart): void {
    this.request("hello", { protocolVersion: PROTOCOL_VERSION, part }).then(
      ({ protocolVersion }) => {
        const mismatch = protocolVersionMismatch({ part, version: PROTOCOL_VERSION }, { part: "core", version: protocolVersion });
        if (mismatch !== undefined) this.#closeWith(mismatch);
      },
      (error: unknown) => {
        if (error instanceof PedelecError && error.code === "PROTOCOL_VERSION_MISMATCH") this.#closeWith(error);
      },
    );
  }

  #closeWith(error: PedelecError): void {
    this.#closeError ??= error;
    this.#client.close(error);
  }

  get closed(): boolean {
    return this.#client.closed;
  }

  /** Sends a frame as is (the native host forwards the extension's frames verbatim); its answer comes to onFrame. */
  sendFrame(frame: CoreRequestFrame): void {
    if (this.#client.closed) throw new PedelecError("IPC_UNAVAILABLE", "the connection to Pedelec Core is closed");
    this.#transport.send(frame);
  }

  /** A typed request; the result is validated against the protocol's result schema. */
  request<T extends CoreRequestType>(type: T, payload: RequestPayload<T>, origin?: string, signal?: AbortSignal): Promise<RequestResult<T>> {
    return this.#client.request((id): CoreRequestFrame => ({ kind: "request", id, type, payload, ...(origin ? { origin } : {}) }), {
      label: type,
      signal,
      check: (result) => {
        const parsed = coreRequestSchemas[type].result.safeParse(result);
        if (!parsed.success) {
          throw new PedelecError("SDK_PROTOCOL_ERROR", `Core answered ${type} with an invalid result`, parsed.error.issues);
        }
        return parsed.data as RequestResult<T>;
      },
    });
  }

  /** Every frame that answers no typed request of this connection: events, script output, forwarded answers. */
  onFrame(listener: (frame: CoreServerFrame) => void): () => void {
    this.#frameListeners.add(listener);
    return () => this.#frameListeners.delete(listener);
  }

  /** Called once when the connection ends; `error` when it ended for a reason (a fatal or unreadable frame). */
  onClose(listener: (error?: PedelecError) => void): () => void {
    this.#closeListeners.add(listener);
    return () => this.#closeListeners.delete(listener);
  }

  close(): void {
    this.#transport.close();
  }
}

function readCoreServerFrame(raw: unknown): ReadMessage<CoreServerFrame> {
  const parsed = coreServerFrameSchema.safeParse(raw);
  if (!parsed.success) {
    const summary = summarizeIssues(parsed.error.issues);
    return {
      kind: "malformed",
      id: undefined,
      error: new PedelecError("SDK_PROTOCOL_ERROR", `Core sent a frame that does not match the protocol: ${summary.message}`, summary.details),
      raw,
    };
  }
  const frame = parsed.data;
  if (frame.kind !== "response") return { kind: "other", message: frame };
  const outcome = frame.ok ? { ok: true as const, result: frame.result } : { ok: false as const, error: PedelecError.fromWire(frame.error) };
  return { kind: "reply", id: frame.id, message: frame, outcome };
}
