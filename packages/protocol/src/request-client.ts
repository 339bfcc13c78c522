import type { ErrorCode } from "./error-codes.js";
import { PedelecError } from "./pedelec-error.js";
import type { MessageTransport } from "./transport.js";

// setTimeout fires at once for delays above 2^31 - 1 ms, so longer deadlines are capped there.
const MAX_TIMER_DELAY_MS = 2_147_483_647;

/** How a request ended, as the other side said it. */
export type ReplyOutcome = { ok: true; result: unknown } | { ok: false; error: PedelecError };

/** One incoming message, sorted by the hop's reader (which validates it against the hop's schema). */
export type ReadMessage<Message> =
  /** The answer to request `id`. */
  | { kind: "reply"; id: string; message: Message; outcome: ReplyOutcome }
  /** Anything else the hop's schema accepts: events, notices. */
  | { kind: "other"; message: Message }
  /** What the hop's schema refuses; `id` when the message still names the request it may be answering. */
  | { kind: "malformed"; id: string | undefined; error: PedelecError; raw: unknown };

/** What a malformed message does to its connection: a hop whose byte stream may be out of step must close it. */
export type MalformedRule = "keep-connection" | "close-connection";

export interface RequestClientOptions<Outgoing, Message> {
  transport: MessageTransport<unknown, Outgoing>;
  /** Validates and sorts every incoming message. */
  read: (raw: unknown) => ReadMessage<Message>;
  /**
   * Every well-formed message that answers no waiting request: events and notices, and replies nobody waits for any
   * more (they came after a timeout or an abort) or never did (a forwarder's own traffic).
   */
  onMessage?: (message: Message) => void;
  /** A malformed message that answers no waiting request. */
  onMalformed?: (error: PedelecError, raw: unknown) => void;
  /**
   * The error waiting requests fail with when the connection closes, and later requests at once. `cause` is the
   * transport's own error, the error the client closed the connection for, or undefined for a plain close.
   */
  closeError: (cause: Error | undefined) => PedelecError;
  /** The error a request fails with when its time is up; needed as soon as any request has a timeout. */
  timeoutError?: (request: { label: string; timeoutMs: number }) => PedelecError;
  /** The code of a request whose signal aborted (a PedelecError reason keeps its own). */
  abortCode: ErrorCode;
  /** What a message the reader refuses does to the connection. */
  malformedMessage: MalformedRule;
  /** What a reply whose result fails the caller's check does to the connection. */
  malformedReply: MalformedRule;
  /** The code of a reply whose result fails the caller's check; SDK_PROTOCOL_ERROR unless said otherwise. */
  malformedReplyCode?: ErrorCode;
  /** Milliseconds every request may wait unless it brings its own; no limit when absent. */
  timeoutMs?: number;
  /** Ids for outgoing requests, unique on this connection; a random prefix and a counter by default. */
  createRequestId?: () => string;
}

export interface RequestOptions<Result> {
  /** Names the request in errors (usually its type). */
  label?: string;
  /** Checks the result and returns what the caller gets; a throw fails the request as a malformed reply. */
  check?: (result: unknown) => Result;
  /** This request's own deadline instead of the client's. */
  timeoutMs?: number;
  /** Withdraws the request: it fails at once with the abort code and a late reply is ignored. */
  signal?: AbortSignal;
}

interface WaitingRequest {
  readonly label: string;
  readonly timeoutMs: number | undefined;
  readonly check: ((result: unknown) => unknown) | undefined;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: PedelecError) => void;
  timer: ReturnType<typeof setTimeout> | undefined;
  stopWatchingSignal: () => void;
}

/**
 * Requests and their answers over any MessageTransport: ids, waiting requests, timeouts, aborts, failing everything
 * that waits when the connection closes, and replies that do not pass their check. The hop supplies the wire shapes
 * (`read` and the frame each request becomes) and the errors, so one implementation serves the page's port, the
 * Native Messaging link and the Core socket. One client per connection: once closed it stays closed.
 */
export class RequestClient<Outgoing, Message> {
  readonly #options: RequestClientOptions<Outgoing, Message>;
  readonly #createRequestId: () => string;
  readonly #waiting = new Map<string, WaitingRequest>();
  readonly #closeListeners = new Set<(error: PedelecError) => void>();
  readonly #stopListening: (() => void)[];
  #closeError: PedelecError | undefined;

  constructor(options: RequestClientOptions<Outgoing, Message>) {
    this.#options = options;
    this.#createRequestId = options.createRequestId ?? sequentialRequestIds();
    this.#stopListening = [options.transport.onMessage((raw) => this.#receive(raw)), options.transport.onClose((error) => this.#shut(error))];
  }

  get closed(): boolean {
    return this.#closeError !== undefined;
  }

  /** Requests sent and not yet answered, timed out or withdrawn. */
  get waitingCount(): number {
    return this.#waiting.size;
  }

  /**
   * Sends the frame `frameFor` builds around a fresh id and resolves with the reply's (checked) result. Rejects with
   * the other side's error, the timeout error, the abort error, the close error, or, when the transport refuses
   * the frame with a PedelecError (too large, say), that error. Any other throw from the transport means the
   * connection is gone: it is closed and every waiting request fails with the close error.
   */
  request<Result = unknown>(frameFor: (id: string) => Outgoing, options: RequestOptions<Result> = {}): Promise<Result> {
    if (this.#closeError !== undefined) return Promise.reject(this.#closeError);
    const { signal } = options;
    if (signal?.aborted) return Promise.reject(this.#abortError(signal));
    const id = this.#createRequestId();
    const frame = frameFor(id);
    const requested = options.timeoutMs ?? this.#options.timeoutMs;
    const timeoutMs = requested === undefined ? undefined : Math.min(MAX_TIMER_DELAY_MS, Math.max(0, requested));
    if (timeoutMs !== undefined && this.#options.timeoutError === undefined) {
      throw new TypeError("a request with a timeout needs the client's timeoutError");
    }
    return new Promise<Result>((resolve, reject) => {
      const waiting: WaitingRequest = {
        label: options.label ?? "request",
        timeoutMs,
        check: options.check,
        resolve: resolve as (value: unknown) => void,
        reject,
        timer: undefined,
        stopWatchingSignal: () => undefined,
      };
      if (signal !== undefined) {
        const onAbort = (): void => {
          if (this.#waiting.get(id) !== waiting) return;
          this.#settle(id, waiting);
          reject(this.#abortError(signal));
        };
        signal.addEventListener("abort", onAbort, { once: true });
        waiting.stopWatchingSignal = () => signal.removeEventListener("abort", onAbort);
      }
      this.#waiting.set(id, waiting);
      this.#startTimer(id, waiting);
      try {
        this.#options.transport.send(frame);
      } catch (error) {
        if (error instanceof PedelecError) {
          if (this.#waiting.get(id) !== waiting) return;
          this.#settle(id, waiting);
          reject(error);
        } else {
          this.close(error instanceof Error ? error : new Error(String(error)));
        }
      }
    });
  }

  /** Stops the clock of a waiting request (it waits on something outside the connection, such as the user). */
  holdTimeout(id: string): boolean {
    const waiting = this.#waiting.get(id);
    if (waiting === undefined) return false;
    clearTimeout(waiting.timer);
    waiting.timer = undefined;
    return true;
  }

  /** Gives a waiting request its whole timeout again, from now. */
  restartTimeout(id: string): boolean {
    const waiting = this.#waiting.get(id);
    if (waiting === undefined) return false;
    this.#startTimer(id, waiting);
    return true;
  }

  /** Fails every waiting request with `error`; the connection stays open for new ones. */
  failWaiting(error: PedelecError): void {
    for (const [id, waiting] of [...this.#waiting]) {
      this.#settle(id, waiting);
      waiting.reject(error);
    }
  }

  /** Closes the connection; waiting and later requests fail with `closeError(cause)`. */
  close(cause?: Error): void {
    if (this.#closeError !== undefined) return;
    this.#shut(cause);
    this.#options.transport.close();
  }

  /** Called once, with the error waiting requests failed with, when the connection closes for any reason. */
  onClose(listener: (error: PedelecError) => void): () => void {
    this.#closeListeners.add(listener);
    return () => this.#closeListeners.delete(listener);
  }

  #receive(raw: unknown): void {
    if (this.#closeError !== undefined) return;
    const read = this.#options.read(raw);
    if (read.kind === "other") {
      this.#options.onMessage?.(read.message);
      return;
    }
    if (read.kind === "malformed") {
      const waiting = read.id === undefined ? undefined : this.#waiting.get(read.id);
      if (read.id !== undefined && waiting !== undefined) {
        this.#settle(read.id, waiting);
        waiting.reject(read.error);
      } else {
        this.#options.onMalformed?.(read.error, read.raw);
      }
      if (this.#options.malformedMessage === "close-connection") this.close(read.error);
      return;
    }
    const waiting = this.#waiting.get(read.id);
    if (waiting === undefined) {
      this.#options.onMessage?.(read.message);
      return;
    }
    this.#settle(read.id, waiting);
    if (!read.outcome.ok) {
      waiting.reject(read.outcome.error);
      return;
    }
    if (waiting.check === undefined) {
      waiting.resolve(read.outcome.result);
      return;
    }
    let checked: unknown;
    try {
      checked = waiting.check(read.outcome.result);
    } catch (error) {
      const refused = PedelecError.from(error, this.#options.malformedReplyCode ?? "SDK_PROTOCOL_ERROR");
      waiting.reject(refused);
      if (this.#options.malformedReply === "close-connection") this.close(refused);
      return;
    }
    waiting.resolve(checked);
  }

  #shut(cause: Error | undefined): void {
    if (this.#closeError !== undefined) return;
    const error = this.#options.closeError(cause);
    this.#closeError = error;
    for (const stop of this.#stopListening) stop();
    this.failWaiting(error);
    for (const listener of [...this.#closeListeners]) listener(error);
  }

  #startTimer(id: string, waiting: WaitingRequest): void {
    clearTimeout(waiting.timer);
    waiting.timer = undefined;
    const { timeoutMs } = waiting;
    const timeoutError = this.#options.timeoutError;
    if (timeoutMs === undefined || timeoutError === undefined) return;
    waiting.timer = setTimeout(() => {
      if (this.#waiting.get(id) !== waiting) return;
      this.#settle(id, waiting);
      waiting.reject(timeoutError({ label: waiting.label, timeoutMs }));
    }, timeoutMs);
  }

  #settle(id: string, waiting: WaitingRequest): void {
    clearTimeout(waiting.timer);
    waiting.timer = undefined;
    waiting.stopWatchingSignal();
    this.#waiting.delete(id);
  }

  #abortError(signal: AbortSignal): PedelecError {
    return PedelecError.from(signal.reason, this.#options.abortCode);
  }
}

function sequentialRequestIds(): () => string {
  // The prefix keeps ids of an earlier client (whose late answers may still arrive on a shared peer) apart.
  const bytes = globalThis.crypto.getRandomValues(new Uint8Array(4));
  const prefix = Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("");
  let count = 0;
  return () => `${prefix}-${++count}`;
}
