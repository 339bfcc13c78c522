// A stand-in for the Pedelec extension as a page sees it: a fake `chrome.runtime` whose ports talk to a
// scriptable extension. Messages are JSON-copied both ways, like Chrome's port serialization.
import { vi } from "vitest";
import type { PageRequest } from "@pedelec/protocol/page-wire";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import type { SessionInfo } from "@pedelec/protocol/requests";
import type { SessionEvent } from "@pedelec/protocol/session-events";
import type { ExtensionPort, ExtensionRuntime } from "../extension-port.js";

export const TEST_ORIGIN = "https://app.example.com";
export const ABSENT_EXTENSION_ERROR = "Could not establish connection. Receiving end does not exist.";

/** Returned by a request handler that wants to leave the request unanswered. */
export const NO_REPLY = Symbol("no reply");

export type FakeRequestHandler = (request: PageRequest, extension: FakeExtension) => unknown;

export function sessionInfo(overrides: Partial<SessionInfo> = {}): SessionInfo {
  return {
    sessionId: "session-0001",
    provider: "claude",
    effortLevel: "medium",
    model: null,
    sessionCreatedAt: "2025-01-01T00:00:00.000Z",
    status: "idle",
    workspace: { path: "/home/user/.pedelec/workspaces/session-0001", managed: true },
    access: "sandbox",
    autoEndOnDisconnect: true,
    toolNames: [],
    lastSeq: 0,
    ...overrides,
  };
}

class FakePort implements ExtensionPort {
  connected = true;
  readonly #extension: FakeExtension;
  readonly #messageListeners: Array<(message: unknown) => void> = [];
  readonly #disconnectListeners: Array<() => void> = [];

  constructor(
    extension: FakeExtension,
    readonly name: string,
  ) {
    this.#extension = extension;
  }

  readonly onMessage = { addListener: (listener: (message: unknown) => void) => void this.#messageListeners.push(listener) };
  readonly onDisconnect = { addListener: (listener: () => void) => void this.#disconnectListeners.push(listener) };

  postMessage(message: unknown): void {
    if (!this.connected) throw new Error("Attempting to use a disconnected port object");
    const copy: unknown = JSON.parse(JSON.stringify(message));
    queueMicrotask(() => this.#extension.receive(this, copy));
  }

  /** Closed by the page: like Chrome, the page's own onDisconnect does not fire. */
  disconnect(): void {
    this.connected = false;
  }

  deliver(message: unknown): void {
    if (!this.connected) return;
    const copy: unknown = message === undefined ? undefined : JSON.parse(JSON.stringify(message));
    for (const listener of this.#messageListeners) listener(copy);
  }

  closeFromExtension(runtime: { lastError: { message: string } | undefined }, lastError?: string): void {
    if (!this.connected) return;
    this.connected = false;
    runtime.lastError = lastError === undefined ? undefined : { message: lastError };
    try {
      for (const listener of this.#disconnectListeners) listener();
    } finally {
      runtime.lastError = undefined;
    }
  }
}

export class FakeExtension {
  /** Every request the page sent, in order. */
  readonly requests: PageRequest[] = [];
  /** Extension ids the page connected to, one entry per connect(). */
  readonly connections: Array<{ extensionId: string; name: string }> = [];
  /** When true, ports behave like Chrome's towards an extension that is not installed. */
  absent = false;
  readonly runtime: ExtensionRuntime & { lastError: { message: string } | undefined };
  readonly #handlers = new Map<string, FakeRequestHandler>();
  readonly #waiters: Array<() => void> = [];
  readonly #seqBySession = new Map<string, number>();
  #port: FakePort | undefined;

  constructor() {
    const runtime = {
      lastError: undefined as { message: string } | undefined,
      connect: (extensionId: string, connectInfo: { name: string }) => this.#connect(runtime, extensionId, connectInfo),
    };
    this.runtime = runtime;
    this.handle("getApprovalStatus", () => ({ installed: true, approved: true, origin: TEST_ORIGIN, appConnected: true }));
    this.handle("createSession", () => sessionInfo());
    this.handle("resumeSession", (request) => sessionInfo({ sessionId: (request.payload as { sessionId: string }).sessionId }));
    this.handle("sendText", (request) => ({ turnId: (request.payload as { turnId: string }).turnId }));
    this.handle("submitToolResult", () => ({ accepted: true }));
    this.handle("cancelTurn", () => ({ cancelled: true }));
    this.handle("endSession", () => ({ ended: true }));
    this.handle("cancelWorkspaceRun", () => ({ cancelled: true }));
  }

  /** Puts a browser page with this extension in place (undo with vi.unstubAllGlobals()). */
  install(): this {
    vi.stubGlobal("window", globalThis);
    vi.stubGlobal("location", { origin: TEST_ORIGIN });
    vi.stubGlobal("chrome", { runtime: this.runtime });
    return this;
  }

  /** Answers requests of one type: return a result, throw a PedelecError for an error answer, or NO_REPLY. */
  handle(type: string, handler: FakeRequestHandler): void {
    this.#handlers.set(type, handler);
  }

  get port(): FakePort | undefined {
    return this.#port;
  }

  /** Sends any message to the page, valid or not. */
  send(message: unknown): void {
    const port = this.#port;
    if (port === undefined) throw new Error("no page is connected");
    queueMicrotask(() => port.deliver(message));
  }

  /** Emits a session event with the next seq of that session (or the given one). */
  emit(sessionId: string, event: SessionEvent, seq?: number): number {
    const next = seq ?? (this.#seqBySession.get(sessionId) ?? 0) + 1;
    this.#seqBySession.set(sessionId, Math.max(next, this.#seqBySession.get(sessionId) ?? 0));
    this.send({ type: "event", sessionId, seq: next, emittedAt: new Date().toISOString(), event });
    return next;
  }

  /** Drops the page's port from the extension's side (e.g. the service worker restarted). */
  dropPort(lastError?: string): void {
    const port = this.#port;
    this.#port = undefined;
    port?.closeFromExtension(this.runtime, lastError);
  }

  /** The `index`-th request of a type, waiting (up to the deadline) until the page sent it. */
  async waitForRequest(type: string, index = 0, deadlineMs = 2_000): Promise<PageRequest> {
    const deadline = Date.now() + deadlineMs;
    for (;;) {
      const found = this.requests.filter((request) => request.type === type)[index];
      if (found !== undefined) return found;
      const remaining = deadline - Date.now();
      if (remaining <= 0) throw new Error(`no ${type} request #${index} within ${deadlineMs} ms`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, remaining);
        this.#waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  requestsOf(type: string): PageRequest[] {
    return this.requests.filter((request) => request.type === type);
  }

  receive(port: FakePort, message: unknown): void {
    // Ports of an absent extension, or ones the extension already dropped, reach nobody.
    if (!port.connected || port !== this.#port) return;
    const request = message as PageRequest;
    this.requests.push(request);
    for (const wake of this.#waiters.splice(0)) wake();
    const handler = this.#handlers.get(request.type);
    void Promise.resolve()
      .then(() => (handler === undefined ? NO_REPLY : handler(request, this)))
      .then(
        (result) => {
          if (result !== NO_REPLY) port.deliver({ id: request.id, ok: true, result });
        },
        (error: unknown) => {
          port.deliver({ id: request.id, ok: false, error: PedelecError.from(error, "SDK_TRANSPORT_ERROR").toWire() });
        },
      );
  }

  #connect(runtime: { lastError: { message: string } | undefined }, extensionId: string, connectInfo: { name: string }): FakePort {
    this.connections.push({ extensionId, name: connectInfo.name });
    const port = new FakePort(this, connectInfo.name);
    if (this.absent) {
      // Chrome hands out a port anyway and disconnects it right after, with lastError set.
      setTimeout(() => port.closeFromExtension(runtime, ABSENT_EXTENSION_ERROR), 0);
      return port;
    }
    this.#port = port;
    return port;
  }
}
