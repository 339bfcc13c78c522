import { ChunkAssembler } from "@pedelec/protocol/chunking";
import { MAX_CORE_FRAME_BYTES } from "@pedelec/protocol/core-wire";
import {
  hostToExtensionMessageSchema,
  type ExtensionToHostMessage,
  type HostStatusFrame,
  type HostToExtensionMessage,
} from "@pedelec/protocol/native-wire";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import type { FullAccessClaim } from "@pedelec/protocol/full-access";
import type { ExtensionToCoreRequestType, SessionRequestType } from "@pedelec/protocol/requests";
import type { SessionEventEnvelope } from "@pedelec/protocol/session-events";
import { consoleLogger, type Logger } from "./logger.js";
import type { NativeChannel, NativeConnector } from "./native-channel.js";

export type CoreStatus = HostStatusFrame["core"];

export interface NativeLinkOptions {
  connect: NativeConnector;
  /** Ids for request frames; unique for the worker's lifetime. */
  createRequestId?: () => string;
  /** Cap for a reassembled chunked message. */
  maxMessageBytes?: number;
  logger?: Logger;
}

interface PendingRequest {
  resolve: (result: unknown) => void;
  reject: (error: PedelecError) => void;
}

interface ChannelState {
  readonly channel: NativeChannel;
  readonly pending: Map<string, PendingRequest>;
  readonly assembler: ChunkAssembler;
  /** Any message at all proves the host process started, which changes how a disconnect is reported. */
  hostSpoke: boolean;
  core: CoreStatus | undefined;
  closed: boolean;
}

/**
 * The one long-lived Native Messaging connection. Opened on first need, reopened on the next request after it
 * dies; requests are matched to responses by an id the link makes up, so callers never share an id space.
 */
export class NativeLink {
  #state: ChannelState | undefined;
  #everOpened = false;
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
    return this.#state.hostSpoke ? "open" : "connecting";
  }

  /** The link is up and the host reports a live connection to Core. */
  get appConnected(): boolean {
    return this.#state?.core === "connected";
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
   * sent, so listeners can queue their own requests (re-subscriptions) ahead of it.
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
      return Promise.reject(hostUnavailable(error instanceof Error ? error.message : String(error)));
    }
    const id = this.#createRequestId();
    const frame: ExtensionToHostMessage = { kind: "request", id, type, origin, payload };
    if (fullAccessClaim !== undefined) frame.fullAccessClaim = fullAccessClaim;
    return new Promise<unknown>((resolve, reject) => {
      const onAbort = (): void => {
        state.pending.delete(id);
        reject(PedelecError.from(signal?.reason, "SDK_TRANSPORT_ERROR"));
      };
      state.pending.set(id, {
        resolve: (result) => {
          signal?.removeEventListener("abort", onAbort);
          resolve(result);
        },
        reject: (error) => {
          signal?.removeEventListener("abort", onAbort);
          reject(error);
        },
      });
      signal?.addEventListener("abort", onAbort, { once: true });
      try {
        state.channel.postMessage(frame);
      } catch (error) {
        this.#handleDisconnect(state, error instanceof Error ? error.message : String(error));
      }
    });
  }

  /**
   * Opens the link if needed and waits until the host has reported whether Core is reachable ("connected" or
   * "unavailable"), the link dies, the deadline passes, or the signal aborts. Never rejects.
   */
  async probe(timeoutMs: number, signal?: AbortSignal): Promise<void> {
    try {
      this.#ensureOpen();
    } catch {
      return;
    }
    const settled = (): boolean => this.#state === undefined || (this.#state.core !== undefined && this.#state.core !== "connecting");
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
    try {
      state.channel.disconnect();
    } catch {
      // Already gone; the bookkeeping below is what matters.
    }
    this.#handleDisconnect(state, undefined, new PedelecError("NATIVE_CONNECTION_CLOSED", "the native connection was closed"));
  }

  #ensureOpen(): ChannelState {
    if (this.#state) return this.#state;
    const channel = this.options.connect();
    const state: ChannelState = {
      channel,
      pending: new Map(),
      assembler: new ChunkAssembler(this.#maxMessageBytes),
      hostSpoke: false,
      core: undefined,
      closed: false,
    };
    channel.onMessage((message) => this.#receive(state, message));
    channel.onDisconnect((errorMessage) => this.#handleDisconnect(state, errorMessage));
    this.#state = state;
    const reopened = this.#everOpened;
    this.#everOpened = true;
    if (reopened) {
      for (const listener of this.#reopenListeners) this.#runListener(() => listener());
    }
    return state;
  }

  #receive(state: ChannelState, raw: unknown): void {
    if (state.closed) return;
    state.hostSpoke = true;
    const parsed = hostToExtensionMessageSchema.safeParse(raw);
    if (!parsed.success) {
      this.#rejectMalformed(state, raw, parsed.error.issues);
      return;
    }
    if (parsed.data.kind !== "chunk") {
      this.#handle(state, parsed.data);
      return;
    }
    let whole: unknown;
    try {
      whole = state.assembler.add(parsed.data);
    } catch (error) {
      this.#logger.warn("SDK_PROTOCOL_ERROR", "dropped a chunked message from the native host", error);
      return;
    }
    if (whole === undefined) return;
    const reassembled = hostToExtensionMessageSchema.safeParse(whole);
    if (!reassembled.success || reassembled.data.kind === "chunk") {
      this.#rejectMalformed(state, whole, reassembled.success ? "a chunk inside a chunk" : reassembled.error.issues);
      return;
    }
    this.#handle(state, reassembled.data);
  }

  #handle(state: ChannelState, message: Exclude<HostToExtensionMessage, { kind: "chunk" }>): void {
    switch (message.kind) {
      case "response": {
        const pending = state.pending.get(message.id);
        if (!pending) return; // Its caller gave up (aborted); nothing to deliver.
        state.pending.delete(message.id);
        if (message.ok) pending.resolve(message.result);
        else pending.reject(PedelecError.fromWire(message.error));
        return;
      }
      case "event":
        for (const listener of this.#eventListeners) this.#runListener(() => listener(message.envelope));
        return;
      case "fatal":
        this.#failPending(state, PedelecError.fromWire(message.error));
        return;
      case "host-status": {
        const wasConnected = state.core === "connected";
        state.core = message.core;
        if (message.core === "unavailable" && message.error) {
          const error = PedelecError.fromWire(message.error);
          this.#failPending(state, error);
          if (wasConnected) this.#notifyLost(error);
        }
        this.#notifyStatus();
        return;
      }
    }
  }

  /** A response we cannot read still answers its request, so the caller is not left waiting forever. */
  #rejectMalformed(state: ChannelState, raw: unknown, issues: unknown): void {
    const id = responseIdOf(raw);
    const pending = id === undefined ? undefined : state.pending.get(id);
    if (id !== undefined && pending) {
      state.pending.delete(id);
      pending.reject(new PedelecError("SDK_PROTOCOL_ERROR", "the native host sent a malformed response", issues));
      return;
    }
    this.#logger.warn("SDK_PROTOCOL_ERROR", "ignored a malformed message from the native host", issues);
  }

  #handleDisconnect(state: ChannelState, errorMessage: string | undefined, override?: PedelecError): void {
    if (state.closed) return;
    state.closed = true;
    if (this.#state === state) this.#state = undefined;
    state.assembler.clear();
    const error =
      override ??
      (state.hostSpoke
        ? new PedelecError(
            "NATIVE_CONNECTION_CLOSED",
            errorMessage ? `the native host connection closed: ${errorMessage}` : "the native host connection closed",
            errorMessage === undefined ? undefined : { lastError: errorMessage },
          )
        : hostUnavailable(errorMessage));
    this.#failPending(state, error);
    if (state.hostSpoke && override === undefined) this.#notifyLost(error);
    this.#notifyStatus();
  }

  #notifyLost(error: PedelecError): void {
    for (const listener of [...this.#lostListeners]) this.#runListener(() => listener(error));
  }

  #failPending(state: ChannelState, error: PedelecError): void {
    const pending = [...state.pending.values()];
    state.pending.clear();
    for (const request of pending) request.reject(error);
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
