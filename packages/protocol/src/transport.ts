/**
 * The one transport shape every hop implements (Chrome ports, Native Messaging stdio, the Core socket),
 * so protocol logic can be tested over an in-memory pair and then end to end.
 */
export interface MessageTransport<Incoming = unknown, Outgoing = unknown> {
  /**
   * Sends one message. Throws a PedelecError when the message itself is refused (too large) and the connection
   * lives on; any other throw means the connection is gone.
   */
  send(message: Outgoing): void;
  /**
   * Closes from this side. This side's close listeners are told without an error: at once, or for a stream that
   * flushes what was written first, once the connection is gone.
   */
  close(): void;
  /** Every message received, in order; returns the unsubscribe function. */
  onMessage(listener: (message: Incoming) => void): () => void;
  /** Called once when the connection ends; `error` says why when the other side or the medium broke it. */
  onClose(listener: (error?: Error) => void): () => void;
}

/**
 * The listener half every transport shares: messages go to their listeners in order until the transport closes, and
 * the close is told once. Implementations own the medium; this owns who hears of it.
 */
export class TransportListeners<Incoming> {
  readonly #messageListeners = new Set<(message: Incoming) => void>();
  readonly #closeListeners = new Set<(error?: Error) => void>();
  #closed = false;

  get closed(): boolean {
    return this.#closed;
  }

  onMessage(listener: (message: Incoming) => void): () => void {
    this.#messageListeners.add(listener);
    return () => this.#messageListeners.delete(listener);
  }

  onClose(listener: (error?: Error) => void): () => void {
    this.#closeListeners.add(listener);
    return () => this.#closeListeners.delete(listener);
  }

  /** Hands a message to every listener; nothing once closed. */
  deliver(message: Incoming): void {
    if (this.#closed) return;
    for (const listener of [...this.#messageListeners]) listener(message);
  }

  /** Tells the close listeners, once; false when the transport had already closed. */
  close(error?: Error): boolean {
    if (this.#closed) return false;
    this.#closed = true;
    for (const listener of [...this.#closeListeners]) listener(error);
    return true;
  }
}

/** Two linked in-memory transports: what one sends, the other receives (asynchronously, in order). */
export function createLinkedTransportPair<A, B>(): [MessageTransport<A, B>, MessageTransport<B, A>] {
  const left = new InMemoryTransport<A, B>();
  const right = new InMemoryTransport<B, A>();
  left.peer = right;
  right.peer = left;
  return [left, right];
}

class InMemoryTransport<Incoming, Outgoing> implements MessageTransport<Incoming, Outgoing> {
  peer: InMemoryTransport<Outgoing, Incoming> | undefined;
  readonly #listeners = new TransportListeners<Incoming>();

  send(message: Outgoing): void {
    if (this.#listeners.closed) throw new Error("transport is closed");
    const peer = this.peer;
    // structuredClone mirrors the copy a real hop makes, so no test shares objects across the boundary.
    const copy = structuredClone(message);
    queueMicrotask(() => peer?.deliver(copy));
  }

  deliver(message: Incoming): void {
    this.#listeners.deliver(message);
  }

  close(): void {
    if (!this.#listeners.close()) return;
    const peer = this.peer;
    queueMicrotask(() => peer?.close());
  }

  onMessage(listener: (message: Incoming) => void): () => void {
    return this.#listeners.onMessage(listener);
  }

  onClose(listener: (error?: Error) => void): () => void {
    return this.#listeners.onClose(listener);
  }
}
