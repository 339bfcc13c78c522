import type { AgentEvent } from "@pedelec/protocol/agent-wire";
import { MAX_TEXT_DELTA_CHARACTERS, MAX_TURN_TEXT_DELTAS, TEXT_DELTA_INTERVAL_MS } from "./turn-limits.js";

export interface TurnEventPacerOptions {
  intervalMs?: number;
  maxDeltaCharacters?: number;
  maxDeltas?: number;
  now?: () => number;
}

/**
 * Sits between a turn and stdout so that an endpoint streaming as fast as it can does not become as many events for
 * the page: text deltas are joined (at most one per interval, the first at once, none past the turn's delta budget,
 * whose text still arrives in message-completed), and every other event first sends the joined text before it, so
 * the order the page sees is the order things happened.
 */
export class TurnEventPacer {
  readonly #emit: (event: AgentEvent) => void;
  readonly #intervalMs: number;
  readonly #maxDeltaCharacters: number;
  readonly #maxDeltas: number;
  readonly #now: () => number;
  #pending: { messageId: string; delta: string } | undefined;
  #timer: NodeJS.Timeout | undefined;
  #lastDeltaAt = Number.NEGATIVE_INFINITY;
  #deltasSent = 0;
  #eventsSent = 0;

  constructor(emit: (event: AgentEvent) => void, options: TurnEventPacerOptions = {}) {
    this.#emit = emit;
    this.#intervalMs = options.intervalMs ?? TEXT_DELTA_INTERVAL_MS;
    this.#maxDeltaCharacters = options.maxDeltaCharacters ?? MAX_TEXT_DELTA_CHARACTERS;
    this.#maxDeltas = options.maxDeltas ?? MAX_TURN_TEXT_DELTAS;
    this.#now = options.now ?? (() => performance.now());
  }

  /** Events sent so far. */
  get eventsSent(): number {
    return this.#eventsSent;
  }

  send(event: AgentEvent): void {
    if (event.type !== "text-delta") {
      this.flush();
      this.#write(event);
      return;
    }
    if (event.delta === "" || this.#deltasSent >= this.#maxDeltas) return;
    if (this.#pending !== undefined && this.#pending.messageId !== event.messageId) this.flush();
    if (this.#pending === undefined) this.#pending = { messageId: event.messageId, delta: event.delta };
    else this.#pending.delta += event.delta;
    if (this.#now() - this.#lastDeltaAt >= this.#intervalMs || this.#pending.delta.length >= this.#maxDeltaCharacters) {
      this.flush();
    } else if (this.#timer === undefined) {
      this.#timer = setTimeout(() => this.flush(), Math.max(0, this.#lastDeltaAt + this.#intervalMs - this.#now()));
    }
  }

  /** Sends the joined text now. */
  flush(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const pending = this.#pending;
    this.#pending = undefined;
    if (pending === undefined) return;
    this.#deltasSent += 1;
    this.#lastDeltaAt = this.#now();
    this.#write({ type: "text-delta", messageId: pending.messageId, delta: pending.delta });
  }

  #write(event: AgentEvent): void {
    this.#eventsSent += 1;
    this.#emit(event);
  }
}
