import type { ExtensionToHostMessage } from "@pedelec/protocol/native-wire";

/**
 * One Native Messaging connection, as `chrome.runtime.connectNative` gives it, reduced to what the link needs.
 * `onDisconnect` hands over `chrome.runtime.lastError.message`, read at the moment Chrome reported it.
 */
export interface NativeChannel {
  /** Throws when the connection is already gone. */
  postMessage(message: ExtensionToHostMessage): void;
  disconnect(): void;
  onMessage(listener: (message: unknown) => void): void;
  onDisconnect(listener: (errorMessage: string | undefined) => void): void;
}

/** Opens a new channel to the native host. Chrome reports a missing host later, through onDisconnect. */
export type NativeConnector = () => NativeChannel;
