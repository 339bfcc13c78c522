import type { MessageTransport } from "./transport.js";

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
  let closed = false;
  const messageListeners = new Set<(message: Incoming) => void>();
  const closeListeners = new Set<(error?: Error) => void>();
  const finish = (error: Error | undefined): void => {
    if (closed) return;
    closed = true;
    for (const listener of [...closeListeners]) listener(error);
  };
  port.onMessage.addListener((message) => {
    if (closed) return;
    for (const listener of [...messageListeners]) listener(message as Incoming);
  });
  port.onDisconnect.addListener(() => {
    const lastError = readLastError();
    finish(lastError === undefined ? undefined : new Error(lastError));
  });
  return {
    send(message) {
      if (closed) throw new Error("the port is disconnected");
      port.postMessage(message);
    },
    close() {
      if (closed) return;
      try {
        port.disconnect();
      } catch {
        // Already gone on Chrome's side; the listeners below still need to hear it.
      }
      finish(undefined);
    },
    onMessage(listener) {
      messageListeners.add(listener);
      return () => messageListeners.delete(listener);
    },
    onClose(listener) {
      closeListeners.add(listener);
      return () => closeListeners.delete(listener);
    },
  };
}
