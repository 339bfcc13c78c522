import type { ExtensionToHostMessage } from "@pedelec/protocol/native-wire";
import type { WindowsApi } from "../approval-window.js";
import type { KeyValueStorage } from "../key-value-storage.js";
import type { NativeChannel } from "../native-channel.js";
import type { PagePort, PortSender } from "../page-port.js";

// Stand-ins for Chrome objects, shaped after the behaviour measured in real Chromium (see the research notes):
// posting on a dead port throws, and a port's disconnect is only reported to the other end.

/** A `chrome.storage` area backed by a Map; `failWrites` makes every write reject like a full quota would. */
export class MemoryStorage implements KeyValueStorage {
  readonly values = new Map<string, unknown>();
  failWrites = false;
  failReads = false;

  async get(key: string): Promise<unknown> {
    if (this.failReads) throw new Error("storage read failed");
    return structuredClone(this.values.get(key));
  }

  async set(key: string, value: unknown): Promise<void> {
    if (this.failWrites) throw new Error("QUOTA_BYTES quota exceeded");
    this.values.set(key, structuredClone(value));
  }
}

/** The extension's end of a page port. `fromPage` and `closeFromPage` act as the page would. */
export class FakePagePort implements PagePort {
  readonly sent: unknown[] = [];
  /** The page is gone; posting throws like Chrome does. */
  gone = false;
  disconnectedByExtension = false;
  readonly #messageListeners: ((message: unknown) => void)[] = [];
  readonly #disconnectListeners: (() => void)[] = [];

  constructor(
    readonly name: string,
    readonly sender: PortSender | undefined,
  ) {}

  readonly onMessage = { addListener: (listener: (message: unknown) => void) => void this.#messageListeners.push(listener) };
  readonly onDisconnect = { addListener: (listener: () => void) => void this.#disconnectListeners.push(listener) };

  postMessage(message: unknown): void {
    if (this.gone) throw new Error("Attempting to use a disconnected port object");
    this.sent.push(structuredClone(message));
  }

  disconnect(): void {
    this.disconnectedByExtension = true;
  }

  fromPage(message: unknown): void {
    const copy = structuredClone(message);
    for (const listener of this.#messageListeners) listener(copy);
  }

  closeFromPage(): void {
    this.gone = true;
    for (const listener of this.#disconnectListeners) listener();
  }

  /** Responses (`{ id, ok, ... }`) the page received for `id`. */
  responsesFor(id: string): { id: string; ok: boolean; result?: unknown; error?: { code: string; message: string; details?: unknown } }[] {
    return this.sent.filter(
      (message): message is { id: string; ok: boolean } =>
        typeof message === "object" && message !== null && "ok" in message && (message as { id?: unknown }).id === id,
    );
  }

  /** Session event envelopes the page received. */
  events(): { sessionId: string; seq: number; event: { type: string } }[] {
    return this.sent.filter(
      (message): message is { sessionId: string; seq: number; event: { type: string } } =>
        typeof message === "object" && message !== null && (message as { type?: unknown }).type === "event",
    );
  }
}

/** One fake Native Messaging connection; the test plays the host. */
export class FakeNativeChannel implements NativeChannel {
  readonly sent: ExtensionToHostMessage[] = [];
  closed = false;
  disconnectedByExtension = false;
  readonly #messageListeners = new Set<(message: unknown) => void>();
  readonly #closeListeners = new Set<(error?: Error) => void>();

  send(message: ExtensionToHostMessage): void {
    if (this.closed) throw new Error("Attempting to use a disconnected port object");
    this.sent.push(structuredClone(message));
  }

  /** The extension disconnects; like a port closed from this side, only this side's listeners hear of it. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.disconnectedByExtension = true;
    for (const listener of [...this.#closeListeners]) listener();
  }

  onMessage(listener: (message: unknown) => void): () => void {
    this.#messageListeners.add(listener);
    return () => this.#messageListeners.delete(listener);
  }

  onClose(listener: (error?: Error) => void): () => void {
    this.#closeListeners.add(listener);
    return () => this.#closeListeners.delete(listener);
  }

  /** The host sends a message. */
  emit(message: unknown): void {
    const copy = structuredClone(message);
    for (const listener of [...this.#messageListeners]) listener(copy);
  }

  hello(core: "connecting" | "connected" | "unavailable" = "connected", coreLaunched?: boolean): void {
    this.emit({ kind: "host-status", version: "0.1.0", core, ...(coreLaunched === undefined ? {} : { coreLaunched }) });
  }

  /** The host goes away; `errorMessage` plays chrome.runtime.lastError.message. */
  die(errorMessage?: string): void {
    this.closed = true;
    for (const listener of [...this.#closeListeners]) listener(errorMessage === undefined ? undefined : new Error(errorMessage));
  }

  requests(type?: string): ExtensionToHostMessage[] {
    return this.sent.filter((frame) => type === undefined || frame.type === type);
  }

  respond(request: ExtensionToHostMessage, result: unknown): void {
    this.emit({ kind: "response", id: request.id, ok: true, result });
  }

  fail(request: ExtensionToHostMessage, code: string, message: string): void {
    this.emit({ kind: "response", id: request.id, ok: false, error: { code, message } });
  }
}

/** Hands out a new FakeNativeChannel per connect, like `chrome.runtime.connectNative`. */
export class FakeNativeHost {
  readonly channels: FakeNativeChannel[] = [];

  /** Every message the extension sent to the host, over every channel it opened. */
  get sent(): ExtensionToHostMessage[] {
    return this.channels.flatMap((channel) => channel.sent);
  }
  readonly connect = (): NativeChannel => {
    const channel = new FakeNativeChannel();
    this.channels.push(channel);
    return channel;
  };

  get current(): FakeNativeChannel {
    const channel = this.channels.at(-1);
    if (!channel) throw new Error("no native channel was opened");
    return channel;
  }
}

/** A valid SessionInfo as Core would return it. */
export function sessionInfo(sessionId: string, autoEndOnDisconnect = true): Record<string, unknown> {
  return {
    sessionId,
    provider: "claude",
    effortLevel: "medium",
    model: null,
    sessionCreatedAt: "2025-01-01T00:00:00.000Z",
    status: "idle",
    workspace: { path: `/tmp/pedelec/workspaces/${sessionId}`, managed: true },
    access: "sandbox",
    autoEndOnDisconnect,
    toolNames: [],
    lastSeq: 0,
    activeTurn: null,
    pendingToolCalls: [],
  };
}

/** A session event envelope as Core emits it. */
export function eventEnvelope(sessionId: string, seq: number, event: Record<string, unknown>): Record<string, unknown> {
  return { type: "event", sessionId, seq, emittedAt: "2025-01-01T00:00:01.000Z", event };
}

/**
 * `chrome.windows` for the approval window. Like Chrome, a removal is reported through onRemoved after the
 * call, whoever removed the window; `closeByUser` plays the user closing it. `failCreate` makes creation reject.
 */
export class FakeWindows implements WindowsApi {
  readonly open = new Map<number, string>();
  created = 0;
  focused = 0;
  /** The most windows that were open at one moment. */
  mostOpenAtOnce = 0;
  failCreate: Error | undefined;
  #nextId = 1;
  readonly #removedListeners: ((windowId: number) => void)[] = [];

  async create(url: string): Promise<number | undefined> {
    if (this.failCreate) throw this.failCreate;
    const windowId = this.#nextId++;
    this.open.set(windowId, url);
    this.created += 1;
    this.mostOpenAtOnce = Math.max(this.mostOpenAtOnce, this.open.size);
    return windowId;
  }

  async focus(windowId: number): Promise<void> {
    if (!this.open.has(windowId)) throw new Error(`No window with id: ${windowId}.`);
    this.focused += 1;
  }

  async remove(windowId: number): Promise<void> {
    if (!this.open.delete(windowId)) throw new Error(`No window with id: ${windowId}.`);
    queueMicrotask(() => this.#emitRemoved(windowId));
  }

  onRemoved(listener: (windowId: number) => void): void {
    this.#removedListeners.push(listener);
  }

  async showing(url: string): Promise<number[]> {
    return [...this.open].filter(([, shown]) => shown === url).map(([windowId]) => windowId);
  }

  /** The user closes the window. */
  closeByUser(windowId: number): void {
    if (this.open.delete(windowId)) this.#emitRemoved(windowId);
  }

  /** A window left open by someone else, e.g. a previous service worker. */
  openStray(url: string): number {
    const windowId = this.#nextId++;
    this.open.set(windowId, url);
    return windowId;
  }

  #emitRemoved(windowId: number): void {
    for (const listener of this.#removedListeners) listener(windowId);
  }
}
