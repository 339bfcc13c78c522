import type { Socket } from "node:net";
import { encodeFrame, FrameDecoder } from "@pedelec/protocol/frame-codec";
import { MAX_CORE_FRAME_BYTES, coreRequestFrameSchema, type CoreRequestFrame, type CoreServerFrame } from "@pedelec/protocol/core-wire";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { log } from "./logger.js";

/**
 * One client of Core (a native host, a pedelec-cli run, the pedelec command): frames in, frames out, and the
 * sessions it follows. A malformed frame closes this connection only.
 */
export class CoreClientConnection {
  readonly subscriptions = new Set<string>();
  readonly #decoder = new FrameDecoder(MAX_CORE_FRAME_BYTES);
  readonly #closed = new AbortController();

  constructor(
    private readonly socket: Socket,
    private readonly onRequest: (connection: CoreClientConnection, frame: CoreRequestFrame) => void,
  ) {
    socket.on("data", (chunk: Buffer) => this.#onData(chunk));
    socket.on("close", () => this.#closed.abort(new PedelecError("IPC_UNAVAILABLE", "the client disconnected")));
    socket.on("error", (error) => log("warn", "client socket error", { error: error.message }));
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

  close(): void {
    this.socket.destroy();
  }

  #fatal(error: PedelecError): void {
    this.send({ kind: "fatal", error: error.toWire() });
    this.socket.end();
    this.socket.destroySoon();
  }

  #onData(chunk: Buffer): void {
    for (const decoded of this.#decoder.push(chunk)) {
      if (!decoded.ok) {
        this.#fatal(decoded.error);
        return;
      }
      const parsed = coreRequestFrameSchema.safeParse(decoded.message);
      if (parsed.success) {
        this.onRequest(this, parsed.data);
        continue;
      }
      // A frame with a usable id gets an answer and the connection lives on; anything else cannot be answered.
      const id = (decoded.message as { id?: unknown } | null)?.id;
      const error = new PedelecError("INVALID_INPUT", "the frame does not match the Core protocol", parsed.error.issues);
      if (typeof id === "string" && id.length > 0 && id.length <= 128) {
        this.send({ kind: "response", id, ok: false, error: error.toWire() });
      } else {
        this.#fatal(error);
        return;
      }
    }
  }
}
