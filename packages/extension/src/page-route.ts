import { PedelecError } from "@pedelec/protocol/pedelec-error";
import type { ExtensionToPageMessage } from "@pedelec/protocol/page-wire";
import type { MessageTransport } from "@pedelec/protocol/transport";

/**
 * One connected SDK port (as the protocol's transport) and what the extension knows about it. Sending never throws: a page can vanish between
 * the check and the post, and that must not break the handler that was answering it.
 */
export class PageRoute {
  readonly #abort = new AbortController();
  #alive = true;

  constructor(
    private readonly transport: MessageTransport<unknown, ExtensionToPageMessage>,
    /** From the port's sender only; undefined when the browser did not tell. */
    readonly origin: string | undefined,
  ) {}

  get alive(): boolean {
    return this.#alive;
  }

  /** Aborts when the page disconnects; waits on the page's behalf listen to it. */
  get signal(): AbortSignal {
    return this.#abort.signal;
  }

  send(message: ExtensionToPageMessage): boolean {
    if (!this.#alive) return false;
    try {
      this.transport.send(message);
      return true;
    } catch {
      this.#alive = false;
      return false;
    }
  }

  close(): void {
    this.#alive = false;
    this.#abort.abort(new PedelecError("EXTENSION_DISCONNECTED", "the page disconnected"));
  }
}
