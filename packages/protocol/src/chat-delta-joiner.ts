/** One chat delta: text added to one message of one turn. */
export interface ChatDeltaPart {
  turnId: string;
  messageId: string;
  delta: string;
}

export interface ChatDeltaJoinerOptions {
  /** Sends one (possibly joined) delta on. */
  send: (part: ChatDeltaPart) => void;
  /** Runs `callback` when the joining window closes (Core: one display frame after the delta it sent). */
  later: (callback: () => void) => void;
}

/**
 * Chat deltas reach pages one event each, and every event costs a native message, a port message and their checks. The
 * first delta goes out at once; those that follow before `later` fires, for the same message, are joined into one,
 * so a fast stream costs a few events instead of one per token. Whatever else a session emits must call
 * `flush()` first, so nothing overtakes a delta that is waiting.
 */
export class ChatDeltaJoiner {
  #waiting: ChatDeltaPart | undefined;
  #windowOpen = false;

  constructor(private readonly options: ChatDeltaJoinerOptions) {}

  push(part: ChatDeltaPart): void {
    const waiting = this.#waiting;
    if (waiting !== undefined && waiting.turnId === part.turnId && waiting.messageId === part.messageId) {
      waiting.delta += part.delta;
      return;
    }
    this.flush();
    if (this.#windowOpen) {
      this.#waiting = { ...part };
      return;
    }
    this.#windowOpen = true;
    this.options.later(() => {
      this.#windowOpen = false;
      this.flush();
    });
    this.options.send(part);
  }

  /** Sends the waiting delta, if any. */
  flush(): void {
    const waiting = this.#waiting;
    if (waiting === undefined) return;
    this.#waiting = undefined;
    this.options.send(waiting);
  }

  /** Drops the waiting delta unsent (its turn is gone). */
  discard(): void {
    this.#waiting = undefined;
  }
}
