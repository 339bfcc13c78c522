import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { waitWithDeadline, type KitTimers } from "./kit-timers.js";
import type { KitTurn } from "./scripted-turn.js";
import type { ScriptedAgent, ScriptedTurn } from "./types.js";

type TurnHandler = (turn: ScriptedTurn) => void | Promise<void>;

/**
 * Who answers each turn: a test waiting in nextTurn() first, then the newest onTurn handler. A prepare turn nobody
 * scripted completes at once (a real agent just says it is ready); any other turn waits for a nextTurn() until the
 * session's idle deadline fails it.
 */
export class KitAgent implements ScriptedAgent {
  readonly #handlers: TurnHandler[] = [];
  readonly #waiters: Array<{ resolve: (turn: KitTurn) => void; reject: (error: Error) => void }> = [];
  readonly #untaken: KitTurn[] = [];
  readonly #timers: KitTimers;
  readonly #waitTimeoutMs: number;

  constructor(timers: KitTimers, waitTimeoutMs: number) {
    this.#timers = timers;
    this.#waitTimeoutMs = waitTimeoutMs;
  }

  onTurn(handler: TurnHandler): () => void {
    if (typeof handler !== "function") throw new TypeError("kit.agent.onTurn() takes a function");
    const entry: TurnHandler = (turn) => handler(turn);
    this.#handlers.push(entry);
    return () => {
      const index = this.#handlers.indexOf(entry);
      if (index >= 0) this.#handlers.splice(index, 1);
    };
  }

  nextTurn(options: { timeoutMs?: number } = {}): Promise<ScriptedTurn> {
    const timeoutMs = options.timeoutMs ?? this.#waitTimeoutMs;
    return waitWithDeadline<KitTurn>(
      this.#timers,
      timeoutMs,
      () => new Error(`kit.agent.nextTurn(): no turn started within ${timeoutMs} ms`),
      (resolve, reject) => {
        const waiting = this.#untaken.findIndex((turn) => !turn.over);
        this.#untaken.splice(0, waiting < 0 ? this.#untaken.length : waiting);
        const queued = this.#untaken.shift();
        if (queued !== undefined) {
          queued.taken = true;
          resolve(queued);
          return () => undefined;
        }
        const waiter = { resolve, reject };
        this.#waiters.push(waiter);
        return () => {
          const index = this.#waiters.indexOf(waiter);
          if (index >= 0) this.#waiters.splice(index, 1);
        };
      },
    );
  }

  /** A turn just started: hand it to whoever scripts it. */
  take(turn: KitTurn): void {
    const waiter = this.#waiters.shift();
    if (waiter !== undefined) {
      turn.taken = true;
      waiter.resolve(turn);
      return;
    }
    const handler = this.#handlers.at(-1);
    if (handler !== undefined) {
      turn.taken = true;
      void this.#run(handler, turn);
      return;
    }
    if (turn.kind === "prepare") {
      turn.taken = true;
      turn.complete("Ready.");
      return;
    }
    this.#untaken.push(turn);
  }

  /** Rejects every waiting nextTurn(): nothing will start any more. */
  dispose(): void {
    for (const waiter of this.#waiters.splice(0)) waiter.reject(new Error("kit.agent.nextTurn(): the test kit was disposed"));
    this.#untaken.splice(0);
    this.#handlers.splice(0);
  }

  async #run(handler: TurnHandler, turn: KitTurn): Promise<void> {
    try {
      await handler(turn);
    } catch (error) {
      // After the turn is over (cancelled, ended), whatever the script throws is its reaction to that.
      if (turn.over) return;
      const failure = error instanceof PedelecError ? error : new PedelecError("PROVIDER_FAILED", `the agent script threw: ${describe(error)}`);
      turn.fail(failure.code, failure.message, failure.details);
      return;
    }
    // A script that returns without ending its turn is a provider that exited cleanly.
    turn.complete();
  }
}

function describe(error: unknown): string {
  if (error instanceof Error) return error.message;
  try {
    return String(error);
  } catch {
    return "a value that cannot be described";
  }
}
