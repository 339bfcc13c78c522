import type { Readable, Writable } from "node:stream";
import { encodeJsonFrame, FrameDecoder } from "@pedelec/protocol/frame-codec";
import { MAX_NATIVE_MESSAGE_BYTES } from "@pedelec/protocol/native-wire";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { TransportListeners, type MessageTransport } from "@pedelec/protocol/transport";

/** Chrome sends the host at most 64 MiB per message. */
const MAX_INCOMING_BYTES = 64 * 1024 * 1024;

/**
 * Chrome Native Messaging on the host side as a MessageTransport: 4-byte little-endian length + UTF-8 JSON, in on
 * stdin and out on stdout. It sends JSON text as given (wrap it in splittingTransport so nothing goes over Chrome's
 * 1 MiB limit). A frame it cannot read means the byte stream is out of step with Chrome, so the transport closes
 * with that error; the end of stdin closes it without one.
 */
export class NativeMessagingStdio implements MessageTransport<unknown, string> {
  readonly #decoder = new FrameDecoder(MAX_INCOMING_BYTES);
  readonly #listeners = new TransportListeners<unknown>();

  constructor(
    private readonly input: Readable,
    private readonly output: Writable,
  ) {
    input.on("data", (chunk: Buffer) => {
      for (const decoded of this.#decoder.push(chunk)) {
        if (this.#listeners.closed) return;
        if (decoded.ok) {
          this.#listeners.deliver(decoded.message);
        } else {
          this.#finish(decoded.error);
        }
      }
    });
    input.on("end", () => this.#finish(undefined));
    input.on("close", () => this.#finish(undefined));
    input.on("error", (error) => this.#finish(new PedelecError("NATIVE_CONNECTION_CLOSED", `reading from the browser failed: ${error.message}`)));
  }

  /** One message as JSON text; MESSAGE_TOO_LARGE over Chrome's 1 MiB limit. */
  send(json: string): void {
    if (this.#listeners.closed) throw new PedelecError("NATIVE_CONNECTION_CLOSED", "the connection to the browser is closed");
    this.output.write(encodeJsonFrame(json, MAX_NATIVE_MESSAGE_BYTES));
  }

  close(): void {
    this.input.pause();
    this.#finish(undefined);
  }

  onMessage(listener: (message: unknown) => void): () => void {
    return this.#listeners.onMessage(listener);
  }

  onClose(listener: (error?: Error) => void): () => void {
    return this.#listeners.onClose(listener);
  }

  #finish(error: PedelecError | undefined): void {
    this.#listeners.close(error);
  }
}
