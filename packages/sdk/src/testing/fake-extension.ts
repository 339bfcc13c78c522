// A stand-in for the Pedelec extension as a page sees it: a fake `chrome.runtime` whose ports talk to a
// scriptable extension. Messages are JSON-copied both ways, like Chrome's port serialization. Several pages (tabs)
// may connect to one fake; each port is a route, the claimant of the tool calls it claims.
import { vi } from "vitest";
import type { PageRequest } from "@pedelec/protocol/page-wire";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import type { SessionInfo } from "@pedelec/protocol/requests";
import type { SessionEvent, SessionEventEnvelope, SessionEventOf } from "@pedelec/protocol/session-events";
import type { ExtensionPort, ExtensionRuntime } from "../extension-port.js";

export const TEST_ORIGIN = "https://app.example.com";
export const ABSENT_EXTENSION_ERROR = "Could not establish connection. Receiving end does not exist.";

/** Returned by a request handler that wants to leave the request unanswered. */
export const NO_REPLY = Symbol("no reply");

/** `route` names the port the request came on, as the real extension names a page's route. */
export type FakeRequestHandler = (request: PageRequest, extension: FakeExtension, route: string) => unknown;

export function sessionInfo(overrides: Partial<SessionInfo> = {}): SessionInfo {
  return {
    sessionId: "session-0001",
    provider: "claude",
    effortLevel: "medium",
    effort: null,
    model: null,
    sessionCreatedAt: "2025-01-01T00:00:00.000Z",
    status: "idle",
    workspace: { path: "/home/user/.pedelec/workspaces/session-0001", managed: true },
    access: "sandbox",
    autoEndOnDisconnect: true,
    toolNames: [],
    lastSeq: 0,
    activeTurn: null,
    pendingToolCalls: [],
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
    readonly route: string,
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
  /** Every request the pages sent, in order. */
  readonly requests: PageRequest[] = [];
  /** Extension ids the pages connected to, one entry per connect(). */
  readonly connections: Array<{ extensionId: string; name: string }> = [];
  /** When true, ports behave like Chrome's towards an extension that is not installed. */
  absent = false;
  readonly runtime: ExtensionRuntime & { lastError: { message: string } | undefined };
  readonly #handlers = new Map<string, FakeRequestHandler>();
  readonly #waiters: Array<() => void> = [];
  readonly #seqBySession = new Map<string, number>();
  /** Every event emitted per session, as Core keeps them for replays. */
  readonly #kept = new Map<string, SessionEventEnvelope[]>();
  /** Which route claimed each tool call. */
  readonly #claims = new Map<string, string>();
  readonly #requestRoutes = new Map<PageRequest, string>();
  /** Events a handler asked to follow its answer, per route. */
  readonly #afterAnswer = new Map<string, SessionEventEnvelope[]>();
  readonly #ports: FakePort[] = [];
  #port: FakePort | undefined;

  constructor() {
    const runtime = {
      lastError: undefined as { message: string } | undefined,
      connect: (extensionId: string, connectInfo: { name: string }) => this.#connect(runtime, extensionId, connectInfo),
    };
    this.runtime = runtime;
    this.handle("getApprovalStatus", () => ({ installed: true, approved: true, origin: TEST_ORIGIN, appConnected: true, appLaunched: false }));
    this.handle("createSession", () => sessionInfo());
    this.handle("resumeSession", (request) => sessionInfo({ sessionId: (request.payload as { sessionId: string }).sessionId }));
    this.handle("sendText", (request) => ({ turnId: (request.payload as { turnId: string }).turnId }));
    this.handle("claimToolCall", (request, _extension, route) => ({
      claimed: this.claim((request.payload as { toolRequestId: string }).toolRequestId, route),
    }));
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

  /** The newest connected port. */
  get port(): FakePort | undefined {
    return this.#port;
  }

  /** The routes of the ports still connected, oldest first. */
  get routes(): string[] {
    return this.#ports.map((port) => port.route);
  }

  /** Sends any message to the newest page, valid or not. */
  send(message: unknown): void {
    const port = this.#port;
    if (port === undefined) throw new Error("no page is connected");
    queueMicrotask(() => port.deliver(message));
  }

  /** Emits a session event to every connected page, with the next seq of that session (or the given one). */
  emit(sessionId: string, event: SessionEvent, seq?: number): number {
    const next = seq ?? (this.#seqBySession.get(sessionId) ?? 0) + 1;
    this.#seqBySession.set(sessionId, Math.max(next, this.#seqBySession.get(sessionId) ?? 0));
    const envelope: SessionEventEnvelope = { type: "event", sessionId, seq: next, emittedAt: new Date().toISOString(), event };
    this.#keptOf(sessionId).push(envelope);
    if (event.type === "tool-call-settled") this.#claims.delete(event.toolRequestId);
    for (const port of [...this.#ports]) queueMicrotask(() => port.deliver(envelope));
    return next;
  }

  /** Records an event as Core kept it without any page hearing it (the link to the pages was down). */
  keep(sessionId: string, event: SessionEvent): number {
    const next = (this.#seqBySession.get(sessionId) ?? 0) + 1;
    this.#seqBySession.set(sessionId, next);
    this.#keptOf(sessionId).push({ type: "event", sessionId, seq: next, emittedAt: new Date().toISOString(), event });
    return next;
  }

  /** The newest seq emitted for a session (0 before any). */
  lastSeqOf(sessionId: string): number {
    return this.#seqBySession.get(sessionId) ?? 0;
  }

  /**
   * Like Core after answering a resume with `afterSeq`: sends the route every kept event newer than it, in order, right
   * after the answer (call it from a request handler). They arrive back to back with the answer, before anything the
   * page does in reaction to it, the tightest order a real port can produce.
   */
  replay(sessionId: string, afterSeq: number, route: string): void {
    const envelopes = this.#keptOf(sessionId).filter((envelope) => envelope.seq > afterSeq);
    const queued = this.#afterAnswer.get(route) ?? [];
    queued.push(...envelopes);
    this.#afterAnswer.set(route, queued);
  }

  /** Claims a tool call for a route: true when it is (or already was) that route's, false when another route has it. */
  claim(toolRequestId: string, route: string): boolean {
    const holder = this.#claims.get(toolRequestId);
    if (holder !== undefined && holder !== route) return false;
    this.#claims.set(toolRequestId, route);
    return true;
  }

  /** Like Core when a route went away: its unanswered claims are dropped and their calls requested again. */
  releaseClaims(sessionId: string, route: string): number {
    let released = 0;
    for (const [toolRequestId, holder] of [...this.#claims]) {
      if (holder !== route) continue;
      this.#claims.delete(toolRequestId);
      const requested = this.#keptOf(sessionId)
        .map((envelope) => envelope.event)
        .filter((event): event is SessionEventOf<"tool-call-requested"> => event.type === "tool-call-requested")
        .find((event) => event.toolRequestId === toolRequestId);
      if (requested === undefined) continue;
      this.emit(sessionId, requested);
      released += 1;
    }
    return released;
  }

  /** Drops a page's port from the extension's side (e.g. the service worker restarted); the newest one by default. */
  dropPort(lastError?: string, route?: string): void {
    const port = route === undefined ? this.#port : this.#ports.find((candidate) => candidate.route === route);
    if (port === undefined) return;
    this.#forget(port);
    port.closeFromExtension(this.runtime, lastError);
  }

  /** The route a request came on. */
  routeOf(request: PageRequest): string | undefined {
    return this.#requestRoutes.get(request);
  }

  /** The `index`-th request of a type, waiting (up to the deadline) until a page sent it. */
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
    if (!port.connected || !this.#ports.includes(port)) return;
    const request = message as PageRequest;
    this.requests.push(request);
    this.#requestRoutes.set(request, port.route);
    for (const wake of this.#waiters.splice(0)) wake();
    const handler = this.#handlers.get(request.type);
    void Promise.resolve()
      .then(() => (handler === undefined ? NO_REPLY : handler(request, this, port.route)))
      .then(
        (result) => {
          if (result !== NO_REPLY) port.deliver({ id: request.id, ok: true, result });
          const following = this.#afterAnswer.get(port.route) ?? [];
          this.#afterAnswer.delete(port.route);
          for (const envelope of following) port.deliver(envelope);
        },
        (error: unknown) => {
          port.deliver({ id: request.id, ok: false, error: PedelecError.from(error, "SDK_TRANSPORT_ERROR").toWire() });
        },
      );
  }

  #keptOf(sessionId: string): SessionEventEnvelope[] {
    let kept = this.#kept.get(sessionId);
    if (kept === undefined) {
      kept = [];
      this.#kept.set(sessionId, kept);
    }
    return kept;
  }

  #forget(port: FakePort): void {
    const index = this.#ports.indexOf(port);
    if (index >= 0) this.#ports.splice(index, 1);
    if (this.#port === port) this.#port = this.#ports.at(-1);
  }

  #connect(runtime: { lastError: { message: string } | undefined }, extensionId: string, connectInfo: { name: string }): FakePort {
    this.connections.push({ extensionId, name: connectInfo.name });
    const port = new FakePort(this, connectInfo.name, `route-${this.connections.length}`);
    if (this.absent) {
      // Chrome hands out a port anyway and disconnects it right after, with lastError set.
      setTimeout(() => port.closeFromExtension(runtime, ABSENT_EXTENSION_ERROR), 0);
      return port;
    }
    this.#ports.push(port);
    this.#port = port;
    return port;
  }
}
