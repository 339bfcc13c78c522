import { TransportListeners, type MessageTransport } from "./transport.js";

/** The part of a Chrome `runtime.Port` a transport needs; a real port, either end, fits it as it is. */
export interface PortLike {
  /** Throws when the port is already disconnected. */
  postMessage(message: unknown): void;
  disconnect(): void;
  readonly onMessage: { addListener(listener: (message: unknown) => void): void };
  readonly onDisconnect: { addListener(listener: () => void): void };
}

/**
 * A Chrome port (page ↔ extension, or the extension's Native Messaging port) as a MessageTransport. Chrome reports a
 * disconnect only to the other end, so closing from this side tells this side's listeners itself. `readLastError`
 * runs inside Chrome's onDisconnect callback, the one moment `chrome.runtime.lastError` means anything (reading it
 * there is also what keeps Chrome from logging it as unchecked); its text becomes the close error's message.
 */
export function portTransport<Incoming = unknown, Outgoing = unknown>(
  port: PortLike,
  readLastError: () => string | undefined = () => undefined,
): MessageTransport<Incoming, Outgoing> {
  const listeners = new TransportListeners<Incoming>();
  port.onMessage.addListener((message) => listeners.deliver(message as Incoming));
  port.onDisconnect.addListener(() => {
    const lastError = readLastError();
    listeners.close(lastError === undefined ? undefined : new Error(lastError));
  });
  return {
    send(message) {
      if (listeners.closed) throw new Error("the port is disconnected");
      port.postMessage(message);
    },
    close() {
      if (listeners.closed) return;
      try {
        port.disconnect();
      } catch {
        // Already gone on Chrome's side; the listeners still need to hear it.
      }
      listeners.close();
    },
    onMessage: (listener) => listeners.onMessage(listener),
    onClose: (listener) => listeners.onClose(listener),
  };
}
