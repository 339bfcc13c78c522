import { ChatDeltaJoiner, type ChatDeltaPart } from "./chat-delta-joiner.js";
import type { SessionInfo } from "./requests.js";
import type { SessionEvent } from "./session-events.js";
import { stepSession, type SessionMachineInput, type SessionMachineOutcomes, type SessionMachineState, type SessionStep } from "./session-machine.js";
import type { UsageUpdate } from "./session-usage.js";
import { UsageUpdateJoiner } from "./usage-update-joiner.js";

export interface SessionDriverOptions<TSealed> {
  state: SessionMachineState;
  /** Runs `callback` when a joining window closes (Core: one display frame; the testing kit: the end of the tick). */
  later: (callback: () => void) => void;
  /** Wraps an event for sending, with its seq; may throw to refuse the step it belongs to (nothing then changes). */
  seal: (seq: number, event: SessionEvent) => TSealed;
  /** Sends one sealed event on, in seq order. */
  send: (sealed: TSealed) => void;
  /** Whether a joined delta or usage update may still go out when its window closes (default: always). */
  mayJoin?: () => boolean;
  /** A usage update went out. */
  onUsageSent?: (update: UsageUpdate) => void;
}

/**
 * Drives the session machine for a shell (Core's Session, the testing kit's stand-in): keeps its state, takes each
 * step (throwing its refusal), seals and sends the step's events in order, and joins text deltas and usage updates
 * (ChatDeltaJoiner, UsageUpdateJoiner), so whatever else goes out first sends what waits to be joined.
 */
export class SessionDriver<TSealed> {
  #state: SessionMachineState;
  readonly #options: SessionDriverOptions<TSealed>;
  readonly #deltas: ChatDeltaJoiner;
  readonly #usageUpdates: UsageUpdateJoiner;

  constructor(options: SessionDriverOptions<TSealed>) {
    this.#options = options;
    this.#state = options.state;
    const mayJoin = options.mayJoin ?? (() => true);
    this.#deltas = new ChatDeltaJoiner({
      send: (part) => {
        if (mayJoin()) this.#take(stepSession(this.#state, { type: "event-published", event: { type: "chat-delta", ...part } }));
      },
      later: options.later,
    });
    this.#usageUpdates = new UsageUpdateJoiner({
      send: (update) => {
        if (!mayJoin()) return;
        // Nothing overtakes a text delta that is waiting.
        this.#deltas.flush();
        this.#take(stepSession(this.#state, { type: "event-published", event: { type: "usage-updated", ...update } }));
        options.onUsageSent?.(update);
      },
      later: options.later,
    });
  }

  get state(): SessionMachineState {
    return this.#state;
  }

  /**
   * One step of the machine; a refusal is thrown. Its events go out after any delta or usage update waiting, once
   * `beforeEvents` has seen the outcome.
   */
  apply<I extends SessionMachineInput>(
    input: I,
    beforeEvents?: (outcome: SessionMachineOutcomes[I["type"]]) => void,
  ): SessionMachineOutcomes[I["type"]] {
    let step = stepSession(this.#state, input);
    if (step.events.length > 0) {
      // Whatever follows a delta or a usage update (a completed message, a tool call, the turn's end) must not overtake it.
      const before = this.#state;
      this.#deltas.flush();
      this.#usageUpdates.flush();
      if (this.#state !== before) step = stepSession(this.#state, input);
    }
    return this.#take(step, beforeEvents);
  }

  /** Text added to a message: the first goes out at once, those that follow within the window are joined. */
  pushDelta(part: ChatDeltaPart): void {
    this.#deltas.push(part);
  }

  /** A changed usage: within the window only the newest goes out. */
  pushUsage(update: UsageUpdate): void {
    this.#usageUpdates.push(update);
  }

  /** Drops a waiting delta and usage update unsent (nobody can receive them any more). */
  discardJoined(): void {
    this.#deltas.discard();
    this.#usageUpdates.discard();
  }

  /** Drops a waiting usage update unsent. */
  discardUsage(): void {
    this.#usageUpdates.discard();
  }

  /** What SessionInfo says of the machine's state: status, last seq, active turn, the calls waiting (copies). */
  infoFields(): Pick<SessionInfo, "status" | "lastSeq" | "activeTurn" | "pendingToolCalls"> {
    const { status, seq, activeTurn, toolCalls } = this.#state;
    return {
      status,
      lastSeq: seq,
      activeTurn: activeTurn === null ? null : { turnId: activeTurn.turnId, turnKind: activeTurn.turnKind },
      pendingToolCalls: toolCalls.waiting.map((entry) => ({ ...entry.call })),
    };
  }

  #take<T extends SessionMachineInput["type"]>(
    step: SessionStep<T>,
    beforeEvents?: (outcome: SessionMachineOutcomes[T]) => void,
  ): SessionMachineOutcomes[T] {
    if (step.refusal !== undefined) throw step.refusal;
    const sealed = step.events.map(({ seq, event }) => this.#options.seal(seq, event));
    this.#state = step.state;
    beforeEvents?.(step.outcome);
    for (const each of sealed) this.#options.send(each);
    return step.outcome;
  }
}
