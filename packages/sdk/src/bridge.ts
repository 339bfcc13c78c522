import {
  extensionToPageMessageSchema,
  isPageRequestType,
  type ExtensionToPageMessage,
  type PageRequest,
  type PageRequestPayload,
  type PageRequestResult,
  type PageRequestType,
} from "@pedelec/protocol/page-wire";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { RequestClient, type ReadMessage } from "@pedelec/protocol/request-client";
import type { SessionEventEnvelope } from "@pedelec/protocol/session-events";
import type { MessageTransport } from "@pedelec/protocol/transport";
import { findExtensionRuntime, isAbsentExtensionMessage, openExtensionTransport, type ExtensionRuntime } from "./extension-port.js";
import { toJsonResult } from "./json-result.js";
import { ListenerSet } from "./listener-set.js";
import { randomId } from "./random-id.js";
import { describeIssues, validateRequestPayload, validateRequestResult } from "./request-validation.js";

export interface BridgeOptions {
  extensionId: string;
  /** Milliseconds a request may wait for its answer (paused while the user is asked for approval). */
  timeoutMs: number;
  /** Used instead of the page's `chrome.runtime` (the testing kit's stand-in of the extension). */
  runtime?: ExtensionRuntime;
}

/** Per-request options of `Bridge.request`. */
export interface BridgeRequestOptions {
  /**
   * This request's own deadline in milliseconds, instead of the bridge timeout: for requests that legitimately
   * take longer, such as a script run whose own timeout may exceed the bridge timeout.
   */
  timeoutMs?: number;
  /** Withdraws the request: it rejects at once (with the signal's PedelecError reason, or SDK_TRANSPORT_ERROR). */
  signal?: AbortSignal;
}

/** A request's result plus the connection that carried it (sessions track which connection subscribed them). */
export interface BridgeAnswer<TResult = unknown> {
  result: TResult;
  generation: number;
}

interface Connection {
  readonly client: RequestClient<PageRequest, ExtensionToPageMessage>;
  /** Counts connections, so a session can tell whether it is subscribed on the live one. */
  readonly generation: number;
}

/**
 * The page end of the extension port: sends requests, matches answers, applies the bridge timeout, validates
 * every incoming message and hands session events on. Ids, timeouts and failing what waits when the port goes are
 * the shared RequestClient's. A lost port fails its pending requests; the next request opens a new port.
 */
export class Bridge {
  readonly #options: BridgeOptions;
  #connection: Connection | undefined;
  #generation = 0;
  #requestCount = 0;
  readonly #requestIdPrefix = randomId().slice(0, 8);
  readonly #eventListeners = new ListenerSet<[SessionEventEnvelope]>();
  readonly #interruptionListeners = new ListenerSet<[string, PedelecError]>();
  readonly #protocolErrorListeners = new ListenerSet<[PedelecError, string | undefined]>();
  readonly #disconnectListeners = new ListenerSet<[number, PedelecError]>();

  constructor(options: BridgeOptions) {
    this.#options = options;
    this.#connect();
  }

  /** The generation of the open port, or undefined when there is none right now. */
  get liveGeneration(): number | undefined {
    return this.#connection?.generation;
  }

  /** The bridge timeout every request gets unless it brings its own deadline. */
  get timeoutMs(): number {
    return this.#options.timeoutMs;
  }

  /**
   * One request of the page request table: its payload is checked against the table's schema before it leaves, and its
   * result when it comes back, so the answer carries the table's result type.
   */
  request<TType extends PageRequestType>(
    type: TType,
    payload: PageRequestPayload<TType>,
    options: BridgeRequestOptions = {},
  ): Promise<BridgeAnswer<PageRequestResult<TType>>> {
    // requestAnyType checks a table type's result against the table's schema, so the answer has the table's type.
    return this.requestAnyType(type, payload, options) as Promise<BridgeAnswer<PageRequestResult<TType>>>;
  }

  /**
   * The escape hatch behind `Pedelec.request()`: any type name. A type of the page request table is checked both
   * ways as by `request`; any other payload only has to be JSON, and its result is passed on unchecked.
   */
  async requestAnyType(type: string, payload: unknown, options: BridgeRequestOptions = {}): Promise<BridgeAnswer> {
    const checkedPayload = checkPayload(type, payload);
    const connection = this.#connect();
    if (connection === undefined) throw extensionUnavailable();
    const result = await connection.client.request((id): PageRequest => ({ id, type, payload: checkedPayload }), {
      label: type,
      timeoutMs: options.timeoutMs,
      signal: options.signal,
      check: (value) => (isPageRequestType(type) ? validateRequestResult(type, value) : value),
    });
    return { result, generation: connection.generation };
  }

  onEvent(listener: (envelope: SessionEventEnvelope) => void): () => void {
    return this.#eventListeners.add(listener);
  }

  /** An invalid message that matched no pending request; `sessionId` when the message named one. */
  onProtocolError(listener: (error: PedelecError, sessionId: string | undefined) => void): () => void {
    return this.#protocolErrorListeners.add(listener);
  }

  /** The extension lost the desktop runtime while this page followed `sessionId`; its events may be gone. */
  onInterruption(listener: (sessionId: string, error: PedelecError) => void): () => void {
    return this.#interruptionListeners.add(listener);
  }

  onDisconnect(listener: (generation: number, error: PedelecError) => void): () => void {
    return this.#disconnectListeners.add(listener);
  }

  #runtime: ExtensionRuntime | undefined;

  /** The page's extension runtime, looked up until found and then kept. */
  #foundRuntime(): ExtensionRuntime | undefined {
    this.#runtime ??= findExtensionRuntime();
    return this.#runtime;
  }

  #connect(): Connection | undefined {
    if (this.#connection !== undefined) return this.#connection;
    // Looked up until found, then kept: a page's `chrome.runtime` does not change, and a client never jumps to another.
    const runtime = this.#options.runtime ?? this.#foundRuntime();
    if (runtime === undefined) return undefined;
    let transport: MessageTransport<unknown, PageRequest>;
    try {
      transport = openExtensionTransport(runtime, this.#options.extensionId);
    } catch {
      // Chrome throws for a malformed extension id or a context that lost its extension access.
      return undefined;
    }
    const generation = this.#generation + 1;
    let heardFrom = false;
    const client: RequestClient<PageRequest, ExtensionToPageMessage> = new RequestClient({
      transport,
      read: (raw) => {
        heardFrom = true;
        return readExtensionMessage(raw);
      },
      onMessage: (message) => this.#handleMessage(client, message),
      onMalformed: (error, raw) => {
        const sessionId = typeof raw === "object" && raw !== null ? (raw as { sessionId?: unknown }).sessionId : undefined;
        this.#protocolErrorListeners.emit(error, typeof sessionId === "string" ? sessionId : undefined);
      },
      closeError: (cause) => {
        const reason = cause?.message;
        // A port that dies before the extension said anything, with Chrome's "no such extension" text, never had one.
        if (!heardFrom && isAbsentExtensionMessage(reason)) return extensionUnavailable(reason);
        return new PedelecError("EXTENSION_DISCONNECTED", "The connection to the Pedelec extension was lost", { reason: reason ?? null });
      },
      timeoutError: ({ label, timeoutMs }) => new PedelecError("SDK_BRIDGE_TIMEOUT", `The extension did not answer ${label} within ${timeoutMs} ms`),
      abortCode: "SDK_TRANSPORT_ERROR",
      malformedMessage: "keep-connection",
      malformedReply: "keep-connection",
      timeoutMs: this.#options.timeoutMs,
      createRequestId: () => `${this.#requestIdPrefix}-${++this.#requestCount}`,
    });
    const connection: Connection = { client, generation };
    client.onClose((error) => {
      if (this.#connection === connection) this.#connection = undefined;
      this.#disconnectListeners.emit(generation, error);
    });
    this.#generation = generation;
    this.#connection = connection;
    return connection;
  }

  #handleMessage(client: RequestClient<PageRequest, ExtensionToPageMessage>, message: ExtensionToPageMessage): void {
    if (!("type" in message)) return; // An answer nobody waits for (it came after the timeout) is dropped.
    switch (message.type) {
      case "event":
        this.#eventListeners.emit(message);
        return;
      case "session-interrupted":
        this.#interruptionListeners.emit(message.sessionId, PedelecError.fromWire(message.error));
        return;
      case "request-progress":
        // While the user looks at the approval popup the request is not stuck, so its clock stops.
        if (message.stage === "approval-settled") client.restartTimeout(message.id);
        else client.holdTimeout(message.id);
        return;
    }
  }
}

/** Validates a message from the extension; a malformed one that names a waiting request fails that request. */
function readExtensionMessage(raw: unknown): ReadMessage<ExtensionToPageMessage> {
  const parsed = extensionToPageMessageSchema.safeParse(raw);
  if (!parsed.success) {
    const { issues } = parsed.error;
    const error = new PedelecError("SDK_PROTOCOL_ERROR", `The extension sent an invalid message: ${describeIssues(issues)}`, { issues });
    const id = typeof raw === "object" && raw !== null ? (raw as { id?: unknown }).id : undefined;
    return { kind: "malformed", id: typeof id === "string" ? id : undefined, error, raw };
  }
  const message = parsed.data;
  if (!("ok" in message)) return { kind: "other", message };
  const outcome = message.ok ? { ok: true as const, result: message.result } : { ok: false as const, error: PedelecError.fromWire(message.error) };
  return { kind: "reply", id: message.id, message, outcome };
}

function checkPayload(type: string, payload: unknown): unknown {
  if (typeof type !== "string" || type.length === 0 || type.length > 64) {
    throw new PedelecError("INVALID_INPUT", "A request type must be a string of 1–64 characters");
  }
  if (isPageRequestType(type)) return validateRequestPayload(type, payload);
  // The escape hatch still must not hand Chrome something it cannot serialize.
  const json = toJsonResult(payload, "payload");
  if (json.ok) return json.value;
  throw new PedelecError("INVALID_INPUT", `The ${type} payload is not JSON: ${json.reason}`);
}

function extensionUnavailable(reason?: string): PedelecError {
  return new PedelecError(
    "EXTENSION_UNAVAILABLE",
    "The Pedelec extension is not reachable from this page (not installed, disabled, or not a browser page)",
    reason === undefined ? undefined : { reason },
  );
}
