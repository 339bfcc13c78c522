import type { Activity } from "@pedelec/protocol/session-events";
import type { ProviderEvent } from "./providers/provider-adapter.js";

/**
 * Bounds how long a turn may wait on the model: the time without progress (text, a message, an activity starting or
 * ending) while nothing else is being waited on — no command the agent runs and no page tool call. A CLI that keeps
 * retrying a dead endpoint, or waits on one that accepted a request and never answers, is stopped after `timeoutMs`,
 * however much it prints about retrying: retry notices are not progress.
 *
 * One timer per turn; progress only notes the time, and the timer checks it when it fires.
 */
export class ModelResponseWatch {
  readonly #timeoutMs: number;
  readonly #onTimeout: () => void;
  /** Activities that started and have not ended: a command runs, so the model is not being waited on. */
  readonly #openActivities = new Set<string>();
  #pausedBy = 0;
  #lastProgressAt = performance.now();
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;
  #lastNotice: Activity | undefined;

  constructor(timeoutMs: number, onTimeout: () => void) {
    this.#timeoutMs = timeoutMs;
    this.#onTimeout = onTimeout;
    this.#schedule();
  }

  /** Notes a provider event: progress restarts the wait, an open activity holds it. */
  observe(event: ProviderEvent): void {
    if (this.#stopped) return;
    switch (event.type) {
      case "activity":
        if (event.notice === true) {
          this.#lastNotice = event.activity;
          return;
        }
        if (event.activity.status === "started") this.#openActivities.add(event.activity.id);
        else this.#openActivities.delete(event.activity.id);
        break;
      case "text-delta":
      case "message-completed":
      case "provider-session-started":
      case "usage":
        break;
      case "output-seen":
        return;
    }
    this.#lastProgressAt = performance.now();
    this.#schedule();
  }

  /** The newest notice the provider gave (say, that it is retrying), for the timeout's message. */
  get lastNotice(): Activity | undefined {
    return this.#lastNotice;
  }

  /** Holds the wait while a page tool call is pending; `resume()` undoes one `pause()`. */
  pause(): void {
    this.#pausedBy += 1;
    this.#clear();
  }

  resume(): void {
    if (this.#pausedBy === 0) return;
    this.#pausedBy -= 1;
    // The answer to a tool call is news to the model: its wait starts now.
    this.#lastProgressAt = performance.now();
    this.#schedule();
  }

  stop(): void {
    this.#stopped = true;
    this.#clear();
  }

  #waiting(): boolean {
    return !this.#stopped && this.#pausedBy === 0 && this.#openActivities.size === 0;
  }

  #schedule(): void {
    if (!this.#waiting()) {
      this.#clear();
      return;
    }
    if (this.#timer !== undefined) return;
    const check = (): void => {
      this.#timer = undefined;
      if (!this.#waiting()) return;
      const quietMs = performance.now() - this.#lastProgressAt;
      if (quietMs < this.#timeoutMs) {
        this.#timer = setTimeout(check, this.#timeoutMs - quietMs);
        return;
      }
      this.stop();
      this.#onTimeout();
    };
    this.#timer = setTimeout(check, Math.max(0, this.#timeoutMs - (performance.now() - this.#lastProgressAt)));
  }

  #clear(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}
