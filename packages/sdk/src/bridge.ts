import { extensionToPageMessageSchema, isPageRequestType } from "@pedelec/protocol/page-wire";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import type { SessionEventEnvelope } from "@pedelec/protocol/session-events";
import {
  connectExtensionPort,
  findExtensionRuntime,
  isAbsentExtensionMessage,
  type ExtensionPort,
} from "./extension-port.js";
import { toJsonResult } from "./json-result.js";
import { ListenerSet } from "./listener-set.js";
import { randomId } from "./random-id.js";
import { describeIssues, validateRequestPayload, validateRequestResult } from "./request-validation.js";

// setTimeout fires at once for delays above 2^31 - 1 ms, so longer deadlines are capped there.
const MAX_TIMER_DELAY_MS = 2_147_483_647;

export interface BridgeOptions {
  extensionId: string;
  /** Milliseconds a request may wait for its answer (paused while the user is asked for approval). */
  timeoutMs: number;
}

/** Per-request options of `Bridge.request`. */
export interface BridgeRequestOptions {
  /**
   * This request's own deadline in milliseconds, instead of the bridge timeout: for requests that legitimately
   * take longer, such as a script run whose own timeout may exceed the bridge timeout.
   */
  timeoutMs?: number;
}

/** A request's result plus the connection that carried it (sessions track which connection subscribed them). */
export interface BridgeAnswer {
  result: unknown;
  generation: number;
}

interface Connection {
  readonly port: ExtensionPort;
  /** Counts connections, so a session can tell whether it is subscribed on the live one. */
  readonly generation: number;
  heardFrom: boolean;
  closed: boolean;
}

interface PendingRequest {
  readonly type: string;
  readonly generation: number;
  readonly timeoutMs: number;
  readonly resolve: (answer: BridgeAnswer) => void;
  readonly reject: (error: PedelecError) => void;
  timer: ReturnType<typeof setTimeout> | undefined;
}

/**
 * The page end of the extension port: sends requests, matches answers, applies the bridge timeout, validates
 * every incoming message and hands session events on. A lost port fails its pending requests; the next request
 * opens a new port.
 */
export class Bridge {
  readonly #options: BridgeOptions;
  #connection: Connection | undefined;
  #generation = 0;
  #requestCount = 0;
  readonly #requestIdPrefix = randomId().slice(0, 8);
  readonly #pending = new Map<string, PendingRequest>();
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

  request(type: string, payload: unknown, options: BridgeRequestOptions = {}): Promise<BridgeAnswer> {
    return new Promise<BridgeAnswer>((resolve, reject) => {
      let checkedPayload: unknown;
      try {
        checkedPayload = checkPayload(type, payload);
      } catch (error) {
        reject(error);
        return;
      }
      const connection = this.#connect();
      if (connection === undefined) {
        reject(extensionUnavailable());
        return;
      }
      this.#requestCount += 1;
      const id = `${this.#requestIdPrefix}-${this.#requestCount}`;
      const timeoutMs = Math.min(MAX_TIMER_DELAY_MS, options.timeoutMs ?? this.#options.timeoutMs);
      const pending: PendingRequest = { type, generation: connection.generation, timeoutMs, resolve, reject, timer: undefined };
      this.#pending.set(id, pending);
      this.#startTimer(id, pending);
      try {
        connection.port.postMessage({ id, type, payload: checkedPayload });
      } catch (error) {
        // The payload is known to be JSON, so a throwing postMessage means the port is gone.
        this.#closeConnection(connection, error instanceof Error ? error.message : String(error));
      }
    });
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

  #connect(): Connection | undefined {
    if (this.#connection !== undefined) return this.#connection;
    const runtime = findExtensionRuntime();
    if (runtime === undefined) return undefined;
    try {
      const port = connectExtensionPort(runtime, this.#options.extensionId);
      const connection: Connection = { port, generation: this.#generation + 1, heardFrom: false, closed: false };
      port.onMessage.addListener((message) => this.#handleMessage(connection, message));
      // Reading lastError inside the callback is also what keeps Chrome from logging it as unchecked.
      port.onDisconnect.addListener(() => this.#closeConnection(connection, runtime.lastError?.message));
      this.#generation = connection.generation;
      this.#connection = connection;
      return connection;
    } catch {
      // Chrome throws for a malformed extension id or a context that lost its extension access.
      return undefined;
    }
  }

  #closeConnection(connection: Connection, reason: string | undefined): void {
    if (connection.closed) return;
    connection.closed = true;
    if (this.#connection === connection) this.#connection = undefined;
    try {
      connection.port.disconnect();
    } catch {
      // Already disconnected on Chrome's side.
    }
    const absent = !connection.heardFrom && isAbsentExtensionMessage(reason);
    const error = absent
      ? extensionUnavailable(reason)
      : new PedelecError("EXTENSION_DISCONNECTED", "The connection to the Pedelec extension was lost", {
          reason: reason ?? null,
        });
    for (const [id, pending] of this.#pending) {
      if (pending.generation !== connection.generation) continue;
      this.#settle(id, pending);
      pending.reject(error);
    }
    this.#disconnectListeners.emit(connection.generation, error);
  }

  #handleMessage(connection: Connection, raw: unknown): void {
    if (connection.closed) return;
    connection.heardFrom = true;
    const parsed = extensionToPageMessageSchema.safeParse(raw);
    if (!parsed.success) {
      this.#reportInvalidMessage(raw, parsed.error.issues);
      return;
    }
    const message = parsed.data;
    if ("type" in message && message.type === "event") {
      this.#eventListeners.emit(message);
      return;
    }
    if ("type" in message && message.type === "session-interrupted") {
      this.#interruptionListeners.emit(message.sessionId, PedelecError.fromWire(message.error));
      return;
    }
    if ("type" in message && message.type === "request-progress") {
      const pending = this.#pending.get(message.id);
      if (pending === undefined) return;
      // While the user looks at the approval popup the request is not stuck, so its clock stops.
      clearTimeout(pending.timer);
      pending.timer = undefined;
      if (message.stage === "approval-settled") this.#startTimer(message.id, pending);
      return;
    }
    if (!("ok" in message)) return;
    const pending = this.#pending.get(message.id);
    // An answer nobody waits for (it came after the timeout) is dropped.
    if (pending === undefined) return;
    this.#settle(message.id, pending);
    if (!message.ok) {
      pending.reject(PedelecError.fromWire(message.error));
      return;
    }
    try {
      pending.resolve({ result: validateRequestResult(pending.type, message.result), generation: pending.generation });
    } catch (error) {
      pending.reject(PedelecError.from(error, "SDK_PROTOCOL_ERROR"));
    }
  }

  #reportInvalidMessage(raw: unknown, issues: readonly unknown[]): void {
    const error = new PedelecError(
      "SDK_PROTOCOL_ERROR",
      `The extension sent an invalid message: ${describeIssues(issues)}`,
      { issues },
    );
    const fields = typeof raw === "object" && raw !== null ? (raw as { id?: unknown; sessionId?: unknown }) : {};
    if (typeof fields.id === "string") {
      const pending = this.#pending.get(fields.id);
      if (pending !== undefined) {
        this.#settle(fields.id, pending);
        pending.reject(error);
        return;
      }
    }
    this.#protocolErrorListeners.emit(error, typeof fields.sessionId === "string" ? fields.sessionId : undefined);
  }

  #startTimer(id: string, pending: PendingRequest): void {
    clearTimeout(pending.timer);
    pending.timer = setTimeout(() => {
      if (this.#pending.get(id) !== pending) return;
      this.#settle(id, pending);
      pending.reject(
        new PedelecError(
          "SDK_BRIDGE_TIMEOUT",
          `The extension did not answer ${pending.type} within ${pending.timeoutMs} ms`,
        ),
      );
    }, pending.timeoutMs);
  }

  #settle(id: string, pending: PendingRequest): void {
    clearTimeout(pending.timer);
    pending.timer = undefined;
    this.#pending.delete(id);
  }
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
