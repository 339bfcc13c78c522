import { reassemblingTransport } from "@pedelec/protocol/chunking";
import { MAX_CORE_FRAME_BYTES } from "@pedelec/protocol/core-wire";
import {
  hostToExtensionMessageSchema,
  type ExtensionToHostMessage,
  type HostStatusFrame,
  type HostToExtensionMessage,
} from "@pedelec/protocol/native-wire";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { protocolVersionMismatch } from "@pedelec/protocol/protocol-mismatch";
import { PROTOCOL_VERSION, UNSTATED_PROTOCOL_VERSION } from "@pedelec/protocol/protocol-version";
import type { FullAccessClaim } from "@pedelec/protocol/full-access";
import { RequestClient, type ReadMessage } from "@pedelec/protocol/request-client";
import type { ExtensionToCoreRequestType, SessionRequestType } from "@pedelec/protocol/requests";
import type { SessionEventEnvelope } from "@pedelec/protocol/session-events";
import type { WireError } from "@pedelec/protocol/wire-error";
import type { DesktopLinkStatus } from "./internal-messages.js";
import { consoleLogger, type Logger } from "./logger.js";
import type { NativeConnector } from "./native-channel.js";

export type CoreStatus = HostStatusFrame["core"];

export interface NativeLinkOptions {
  connect: NativeConnector;
  /** Ids for request frames; unique for the worker's lifetime. */
  createRequestId?: () => string;
  /** Cap for a reassembled chunked message. */
  maxMessageBytes?: number;
  logger?: Logger;
}

/** What the host sends, once chunks are put back together (a chunk inside a chunk is malformed). */
type HostMessage = Exclude<HostToExtensionMessage, { kind: "chunk" }>;

interface ChannelStatus {
  /** Any message at all proves the host process started, which changes how a disconnect is reported. */
  hostSpoke: boolean;
  core: CoreStatus | undefined;
  /** The link itself closed this channel (`close()`), so nobody is told the link was lost. */
  closedByLink: boolean;
  /** Core was connected on this channel and went away; the next "connected" is a new Core. */
  coreLost: boolean;
  /** The host started Core the last time it connected or tried to (host-status `coreLaunched`). */
  coreLaunched: boolean;
  /** The version the host's last host-status reported. */
  version?: string;
  /** Why Core is unavailable, from the host's last host-status. */
  coreError?: WireError;
}

interface ChannelState {
  readonly client: RequestClient<ExtensionToHostMessage, HostMessage>;
  readonly status: ChannelStatus;
}
/**
 * The one long-lived Native Messaging connection. Opened on first need, reopened on the next request after it
 * dies. Requests are matched to responses by the shared RequestClient, with ids the link makes up, so callers never
 * share an id space; chunked messages from the host are put back together by the transport beneath it.
 */
export class NativeLink {
  #state: ChannelState | undefined;
  #everOpened = false;
  /** Why the last channel ended (or could not open), unless the link closed it itself; cleared by the next channel. */
  #lastFailure: PedelecError | undefined;
  readonly #createRequestId: () => string;
  readonly #maxMessageBytes: number;
  readonly #logger: Logger;
  readonly #eventListeners = new Set<(envelope: SessionEventEnvelope) => void>();
  readonly #reopenListeners = new Set<() => void>();
  readonly #statusListeners = new Set<() => void>();
  readonly #lostListeners = new Set<(error: PedelecError) => void>();

  constructor(private readonly options: NativeLinkOptions) {
    this.#createRequestId = options.createRequestId ?? defaultRequestIds();
    this.#maxMessageBytes = options.maxMessageBytes ?? MAX_CORE_FRAME_BYTES;
    this.#logger = options.logger ?? consoleLogger;
  }

  /** "connecting" until the host's first message arrives. */
  get state(): "closed" | "connecting" | "open" {
    if (!this.#state) return "closed";
    return this.#state.status.hostSpoke ? "open" : "connecting";
  }

  /** The link is up and the host reports a live connection to Core. */
  get appConnected(): boolean {
    return this.#state?.status.core === "connected";
  }

  /** The host had to start Core (it was not running) the last time it connected or tried to, on the current channel. */
  get coreLaunched(): boolean {
    return this.#state?.status.coreLaunched ?? false;
  }

  /** What the popup shows about the link: derived from the current channel, or from how the last one ended. */
  get status(): DesktopLinkStatus {
    const state = this.#state;
    if (state === undefined) {
      const failure = this.#lastFailure;
      if (failure === undefined) return { state: "not-connected" };
      return failure.code === "NATIVE_HOST_UNAVAILABLE"
        ? { state: "host-missing", error: failure.toWire() }
        : { state: "disconnected", error: failure.toWire() };
    }
    const { hostSpoke, core, version, coreError } = state.status;
    if (!hostSpoke || version === undefined || core === undefined || core === "connecting") {
      return version === undefined ? { state: "connecting" } : { state: "connecting", version };
    }
    if (core === "connected") return { state: "connected", version };
    return coreError === undefined ? { state: "core-unavailable", version } : { state: "core-unavailable", version, error: coreError };
  }

  /** Session events from Core, in arrival order. */
  onEvent(listener: (envelope: SessionEventEnvelope) => void): () => void {
    this.#eventListeners.add(listener);
    return () => this.#eventListeners.delete(listener);
  }

  /**
   * Called when a working link to Core breaks: the host went away after it had spoken (NATIVE_CONNECTION_CLOSED), or
   * the host reports that Core, once connected, is gone. Events sent meanwhile are lost.
   */
  onLinkLost(listener: (error: PedelecError) => void): () => void {
    this.#lostListeners.add(listener);
    return () => this.#lostListeners.delete(listener);
  }

  /**
   * Called synchronously when a new connection replaces one that died, before the request that triggered it is
   * sent, so listeners can queue their own requests (re-subscriptions) ahead of it; and when the host reports a Core
   * again after it lost one (it started a new Core), which knows no subscriptions either.
   */
  onReopen(listener: () => void): () => void {
    this.#reopenListeners.add(listener);
    return () => this.#reopenListeners.delete(listener);
  }

  /**
   * Sends one request to Core and resolves with its result. Rejects with Core's error, NATIVE_HOST_UNAVAILABLE
   * (the host never spoke), NATIVE_CONNECTION_CLOSED (it went away later), a `fatal` frame's error, or the
   * signal's reason. `fullAccessClaim` goes on the frame for the native host to attest; only the extension makes it.
   */
  request(
    type: SessionRequestType | ExtensionToCoreRequestType,
    origin: string,
    payload: unknown,
    signal?: AbortSignal,
    fullAccessClaim?: FullAccessClaim,
  ): Promise<unknown> {
    if (signal?.aborted) return Promise.reject(PedelecError.from(signal.reason, "SDK_TRANSPORT_ERROR"));
    let state: ChannelState;
    try {
      state = this.#ensureOpen();
    } catch (error) {
      return Promise.reject(this.#openFailed(error));
    }
    return state.client.request(
      (id) => {
        const frame: ExtensionToHostMessage = { kind: "request", id, type, origin, payload };
        if (fullAccessClaim !== undefined) frame.fullAccessClaim = fullAccessClaim;
        return frame;
      },
      { label: type, signal },
    );
  }

  /**
   * Opens the link if needed and waits until the host has reported whether Core is reachable ("connected" or
   * "unavailable"), the link dies, the deadline passes, or the signal aborts. Never rejects.
   */
  async probe(timeoutMs: number, signal?: AbortSignal): Promise<void> {
    try {
      this.#ensureOpen();
    } catch (error) {
      this.#openFailed(error);
      return;
    }
    const settled = (): boolean => {
      const core = this.#state?.status.core;
      return this.#state === undefined || (core !== undefined && core !== "connecting");
    };
    if (settled() || signal?.aborted) return;
    await new Promise<void>((resolve) => {
      const finish = (): void => {
        clearTimeout(timer);
        this.#statusListeners.delete(check);
        signal?.removeEventListener("abort", finish);
        resolve();
      };
      const check = (): void => {
        if (settled()) finish();
      };
      const timer = setTimeout(finish, timeoutMs);
      this.#statusListeners.add(check);
      signal?.addEventListener("abort", finish, { once: true });
    });
  }

  /** Closes the connection; pending requests fail with NATIVE_CONNECTION_CLOSED. */
  close(): void {
    const state = this.#state;
    if (!state) return;
    state.status.closedByLink = true;
    state.client.close();
  }

  #ensureOpen(): ChannelState {
    if (this.#state) return this.#state;
    const channel = this.options.connect();
    const status: ChannelStatus = { hostSpoke: false, core: undefined, closedByLink: false, coreLost: false, coreLaunched: false };
    // Any piece of a message counts as the host speaking, even one still waiting for the rest of its chunks.
    channel.onMessage(() => {
      status.hostSpoke = true;
    });
    const transport = reassemblingTransport(channel, {
      maxMessageBytes: this.#maxMessageBytes,
      onDropped: (error) => this.#logger.warn("SDK_PROTOCOL_ERROR", "dropped a chunked message from the native host", error),
    });
    const client = new RequestClient<ExtensionToHostMessage, HostMessage>({
      transport,
      read: readHostMessage,
      onMessage: (message) => this.#handle(state, message),
      onMalformed: (error) => this.#logger.warn("SDK_PROTOCOL_ERROR", "ignored a malformed message from the native host", error.details),
      closeError: (cause) => closeErrorOf(status, cause),
      abortCode: "SDK_TRANSPORT_ERROR",
      // Chrome delivers the host's messages whole, so one bad message says nothing about the next.
      malformedMessage: "keep-connection",
      malformedReply: "keep-connection",
      createRequestId: this.#createRequestId,
    });
    const state: ChannelState = { client, status };
    client.onClose((error) => this.#closed(state, error));
    this.#state = state;
    this.#lastFailure = undefined;
    const reopened = this.#everOpened;
    this.#everOpened = true;
    if (reopened) {
      for (const listener of this.#reopenListeners) this.#runListener(() => listener());
    }
    return state;
  }

  /** A connect that threw: the browser could not start the host. Remembered for `status`. */
  #openFailed(error: unknown): PedelecError {
    const failure = hostUnavailable(error instanceof Error ? error.message : String(error));
    this.#lastFailure = failure;
    return failure;
  }

  #handle(state: ChannelState, message: HostMessage): void {
    switch (message.kind) {
      case "response":
        return; // Its caller gave up (aborted); nothing to deliver.
      case "event":
        for (const listener of this.#eventListeners) this.#runListener(() => listener(message.envelope));
        return;
      case "fatal":
        state.client.failWaiting(PedelecError.fromWire(message.error));
        return;
      case "host-status": {
        const mismatch = protocolVersionMismatch(
          { part: "extension", version: PROTOCOL_VERSION },
          { part: "native-host", version: message.protocolVersion ?? UNSTATED_PROTOCOL_VERSION },
        );
        if (mismatch !== undefined) {
          // The host's first message: nothing was answered yet, and nothing will be on this channel.
          this.#logger.warn("PROTOCOL_VERSION_MISMATCH", "closed the link to a native host of another protocol version", mismatch.details);
          state.client.close(mismatch);
          return;
        }
        const wasConnected = state.status.core === "connected";
        state.status.core = message.core;
        state.status.version = message.version;
        state.status.coreError = message.core === "unavailable" ? message.error : undefined;
        if (message.coreLaunched !== undefined) state.status.coreLaunched = message.coreLaunched;
        if (message.core === "unavailable" && message.error) {
          const error = PedelecError.fromWire(message.error);
          state.client.failWaiting(error);
          if (wasConnected) {
            state.status.coreLost = true;
            this.#notifyLost(error);
          }
        }
        if (message.core === "connected" && state.status.coreLost) {
          // The host reached a Core again (it started a new one): that Core knows none of the old subscriptions.
          state.status.coreLost = false;
          for (const listener of this.#reopenListeners) this.#runListener(() => listener());
        }
        this.#notifyStatus();
        return;
      }
    }
  }

  #closed(state: ChannelState, error: PedelecError): void {
    if (this.#state === state) this.#state = undefined;
    if (!state.status.closedByLink && this.#state === undefined) this.#lastFailure = error;
    if (state.status.hostSpoke && !state.status.closedByLink) this.#notifyLost(error);
    this.#notifyStatus();
  }

  #notifyLost(error: PedelecError): void {
    for (const listener of [...this.#lostListeners]) this.#runListener(() => listener(error));
  }

  #notifyStatus(): void {
    for (const listener of [...this.#statusListeners]) listener();
  }

  #runListener(call: () => void): void {
    try {
      call();
    } catch (error) {
      this.#logger.warn("SDK_TRANSPORT_ERROR", "a native link listener threw", error);
    }
  }
}

/** Validates a (reassembled) message from the host; a response we cannot read still answers its request. */
function readHostMessage(raw: unknown): ReadMessage<HostMessage> {
  const parsed = hostToExtensionMessageSchema.safeParse(raw);
  if (!parsed.success || parsed.data.kind === "chunk") {
    const issues = parsed.success ? "a chunk inside a chunk" : parsed.error.issues;
    return {
      kind: "malformed",
      id: responseIdOf(raw),
      error: new PedelecError("SDK_PROTOCOL_ERROR", "the native host sent a malformed response", issues),
      raw,
    };
  }
  const message = parsed.data;
  if (message.kind !== "response") return { kind: "other", message };
  const outcome = message.ok ? { ok: true as const, result: message.result } : { ok: false as const, error: PedelecError.fromWire(message.error) };
  return { kind: "reply", id: message.id, message, outcome };
}

/** What waiting requests fail with when the channel ends: the host never started, it went away, or we closed it. */
function closeErrorOf(status: ChannelStatus, cause: Error | undefined): PedelecError {
  if (cause instanceof PedelecError && cause.code === "PROTOCOL_VERSION_MISMATCH") return cause;
  if (status.closedByLink) return new PedelecError("NATIVE_CONNECTION_CLOSED", "the native connection was closed");
  const errorMessage = cause?.message;
  if (!status.hostSpoke) return hostUnavailable(errorMessage);
  return new PedelecError(
    "NATIVE_CONNECTION_CLOSED",
    errorMessage ? `the native host connection closed: ${errorMessage}` : "the native host connection closed",
    errorMessage === undefined ? undefined : { lastError: errorMessage },
  );
}

function hostUnavailable(errorMessage: string | undefined): PedelecError {
  return new PedelecError(
    "NATIVE_HOST_UNAVAILABLE",
    errorMessage ? `the Pedelec native host is unavailable: ${errorMessage}` : "the Pedelec native host is unavailable",
    { lastError: errorMessage ?? null },
  );
}

function responseIdOf(raw: unknown): string | undefined {
  if (typeof raw !== "object" || raw === null) return undefined;
  const candidate = raw as { kind?: unknown; id?: unknown };
  return candidate.kind === "response" && typeof candidate.id === "string" ? candidate.id : undefined;
}

function defaultRequestIds(): () => string {
  // A per-worker prefix keeps ids from an earlier worker instance (whose late answers a host might still send) apart.
  const prefix = crypto.randomUUID().slice(0, 8);
  let counter = 0;
  return () => `ext-${prefix}-${++counter}`;
}
