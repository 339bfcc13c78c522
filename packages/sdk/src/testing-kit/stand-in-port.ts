// The page's end of a port to the stand-in extension, behaving as Chrome's does: messages are copied (JSON, as
// Chrome serializes them) and arrive asynchronously, in order; a page that disconnects hears nothing back; a port the
// extension closes tells the page through onDisconnect, with `runtime.lastError` set only during that callback.
import type { ExtensionPort, ExtensionRuntime } from "../extension-port.js";

/** What the extension end of a port does with what the page sends. */
export interface PortPeer {
  receive(message: unknown): void;
  /** The page closed the port (its tab went away, or the SDK let go of it). */
  closedByPage(): void;
}

/** The `chrome.runtime` slice the SDK uses, whose `connect()` reaches the stand-in. */
export interface StandInRuntime extends ExtensionRuntime {
  lastError: { message: string } | undefined;
}

export class StandInPort implements ExtensionPort {
  #open = true;
  #peer: PortPeer | undefined;
  readonly #runtime: StandInRuntime;
  readonly #messageListeners: Array<(message: unknown) => void> = [];
  readonly #disconnectListeners: Array<() => void> = [];

  readonly onMessage = { addListener: (listener: (message: unknown) => void): void => void this.#messageListeners.push(listener) };
  readonly onDisconnect = { addListener: (listener: () => void): void => void this.#disconnectListeners.push(listener) };

  constructor(runtime: StandInRuntime) {
    this.#runtime = runtime;
  }

  get open(): boolean {
    return this.#open;
  }

  attach(peer: PortPeer): void {
    this.#peer = peer;
  }

  postMessage(message: unknown): void {
    if (!this.#open) throw new Error("Attempting to use a disconnected port object");
    const copy = jsonCopy(message);
    queueMicrotask(() => {
      if (this.#open) this.#peer?.receive(copy);
    });
  }

  /** Closed by the page: as in Chrome, the page's own onDisconnect does not fire; the extension hears of it. */
  disconnect(): void {
    if (!this.#open) return;
    this.#open = false;
    queueMicrotask(() => this.#peer?.closedByPage());
  }

  /** A message from the extension, already a checked wire message. */
  deliver(message: unknown): void {
    if (!this.#open) return;
    const copy = jsonCopy(message);
    queueMicrotask(() => {
      if (!this.#open) return;
      for (const listener of [...this.#messageListeners]) listener(copy);
    });
  }

  /** Closed by the extension: after what was already sent, the page's onDisconnect fires. */
  closeFromExtension(lastError?: string): void {
    if (!this.#open) return;
    queueMicrotask(() => {
      if (!this.#open) return;
      this.#open = false;
      this.#runtime.lastError = lastError === undefined ? undefined : { message: lastError };
      try {
        for (const listener of [...this.#disconnectListeners]) listener();
      } finally {
        this.#runtime.lastError = undefined;
      }
    });
  }

  /** Stops the port without telling either end (the kit is being disposed). */
  silence(): void {
    this.#open = false;
  }
}

function jsonCopy(message: unknown): unknown {
  return message === undefined ? undefined : JSON.parse(JSON.stringify(message));
}
