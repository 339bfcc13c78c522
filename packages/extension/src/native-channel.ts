import type { ExtensionToHostMessage } from "@pedelec/protocol/native-wire";
import type { MessageTransport } from "@pedelec/protocol/transport";

/**
 * One Native Messaging connection, as `chrome.runtime.connectNative` gives it, as a transport: sending throws once
 * the connection is gone, and the close error carries `chrome.runtime.lastError.message`, read at the moment Chrome
 * reported the disconnect.
 */
export type NativeChannel = MessageTransport<unknown, ExtensionToHostMessage>;

/** Opens a new channel to the native host. Chrome reports a missing host later, through the close. */
export type NativeConnector = () => NativeChannel;
