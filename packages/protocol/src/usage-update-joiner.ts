import type { UsageUpdate } from "./session-usage.js";

export interface UsageUpdateJoinerOptions {
  /** Sends one update on. */
  send: (update: UsageUpdate) => void;
  /** Runs `callback` when the joining window closes (Core: one display frame after the update it sent). */
  later: (callback: () => void) => void;
}

/**
 * A provider may report its usage with every token it streams, and each update costs a native message and a port
 * message like any event; yet each one carries totals, so only the newest matters. The first update goes out at once
 * and opens a window; updates within it wait, each replacing the one before, and the newest goes out when the window
 * closes, opening the next: at most one update per window however chatty the provider. Whatever else a session emits
 * calls `flush()` first, so a turn's end never overtakes its last update.
 */
export class UsageUpdateJoiner {
  #waiting: UsageUpdate | undefined;
  #windowOpen = false;

  constructor(private readonly options: UsageUpdateJoinerOptions) {}

  push(update: UsageUpdate): void {
    if (!this.#windowOpen) {
      this.#sendAndWait(update);
      return;
    }
    // An update of another turn does not replace this one's last word.
    if (this.#waiting !== undefined && this.#waiting.turnId !== update.turnId) this.flush();
    this.#waiting = update;
  }

  /** Sends the waiting update, if any. */
  flush(): void {
    const waiting = this.#waiting;
    if (waiting === undefined) return;
    this.#waiting = undefined;
    this.options.send(waiting);
  }

  /** Drops the waiting update unsent (nobody can receive it any more). */
  discard(): void {
    this.#waiting = undefined;
  }

  #sendAndWait(update: UsageUpdate): void {
    this.#windowOpen = true;
    this.options.later(() => {
      this.#windowOpen = false;
      const waiting = this.#waiting;
      this.#waiting = undefined;
      if (waiting !== undefined) this.#sendAndWait(waiting);
    });
    this.options.send(update);
  }
}
