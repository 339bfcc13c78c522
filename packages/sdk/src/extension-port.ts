import type { PageRequest } from "@pedelec/protocol/page-wire";
import { SDK_PORT_NAME } from "@pedelec/protocol/page-wire";
import { portTransport } from "@pedelec/protocol/port-transport";
import type { MessageTransport } from "@pedelec/protocol/transport";

/** The part of `chrome.runtime.Port` the SDK uses (the SDK does not depend on @types/chrome). */
export interface ExtensionPort {
  postMessage(message: unknown): void;
  disconnect(): void;
  readonly onMessage: { addListener(listener: (message: unknown) => void): void };
  readonly onDisconnect: { addListener(listener: () => void): void };
}

/** The part of `chrome.runtime` the SDK uses. */
export interface ExtensionRuntime {
  connect(extensionId: string, connectInfo: { name: string }): ExtensionPort;
  /** Set by Chrome while a callback runs that reports a failure, e.g. onDisconnect of a port that never connected. */
  readonly lastError?: { message?: string } | undefined;
}

/**
 * The option key under which a `Pedelec` may be handed the runtime to use instead of the page's `chrome.runtime`:
 * the testing kit's in-page stand-in of the extension. Not part of the public options type. A registered symbol, so
 * the kit reaches a client built from another copy of this module (one bundle per package entry).
 */
export const EXTENSION_RUNTIME_OPTION: unique symbol = Symbol.for("@kaoruisaac/pedelec/extension-runtime");

/** The runtime a Pedelec's options carry under EXTENSION_RUNTIME_OPTION, if any. */
export function injectedExtensionRuntime(options: unknown): ExtensionRuntime | undefined {
  if (typeof options !== "object" || options === null) return undefined;
  const runtime = (options as { [EXTENSION_RUNTIME_OPTION]?: Partial<ExtensionRuntime> })[EXTENSION_RUNTIME_OPTION];
  return typeof runtime?.connect === "function" ? (runtime as ExtensionRuntime) : undefined;
}

/**
 * The runtime through which this page can reach an extension, or undefined outside a browser page or when
 * no extension exposes `chrome.runtime.connect` to this origin. Read on every connect, never at import time.
 */
export function findExtensionRuntime(): ExtensionRuntime | undefined {
  if (typeof window === "undefined") return undefined;
  const chrome = (globalThis as { chrome?: { runtime?: Partial<ExtensionRuntime> } }).chrome;
  const runtime = chrome?.runtime;
  return typeof runtime?.connect === "function" ? (runtime as ExtensionRuntime) : undefined;
}

/** Chrome's lastError text when the target extension is not installed (or not enabled). */
const ABSENT_EXTENSION_PATTERN = /Could not establish connection|Receiving end does not exist/i;

export function isAbsentExtensionMessage(message: string | undefined): boolean {
  return message !== undefined && ABSENT_EXTENSION_PATTERN.test(message);
}

export function connectExtensionPort(runtime: ExtensionRuntime, extensionId: string): ExtensionPort {
  return runtime.connect(extensionId, { name: SDK_PORT_NAME });
}

/**
 * A new port to the extension as a MessageTransport. A disconnect's close error carries Chrome's lastError text (for
 * an extension that is not there, "Could not establish connection…"). Throws when Chrome refuses to connect at all.
 */
export function openExtensionTransport(runtime: ExtensionRuntime, extensionId: string): MessageTransport<unknown, PageRequest> {
  return portTransport(connectExtensionPort(runtime, extensionId), () => runtime.lastError?.message);
}
