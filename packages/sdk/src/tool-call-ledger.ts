/** How many finished tool calls are remembered per page, so a late duplicate request never runs a handler again. */
const DEFAULT_REMEMBERED_CALLS = 10_000;

/**
 * The tool calls one page (one extension port, so one claimant for Core) has taken, shared by every handle of the
 * page's client: two handles of one session in one page (say, a component mounted twice) hold the same claim, so
 * only one of them may run the handler.
 */
export class ToolCallLedger {
  readonly #calls = new Map<string, "taken" | "finished">();
  readonly #limit: number;

  constructor(limit = DEFAULT_REMEMBERED_CALLS) {
    this.#limit = Math.max(1, limit);
  }

  /** Takes a call for one handle; false when this page already runs it or ran it. */
  take(sessionId: string, toolRequestId: string): boolean {
    const key = keyOf(sessionId, toolRequestId);
    if (this.#calls.has(key)) return false;
    this.#calls.set(key, "taken");
    return true;
  }

  /** The page is done with the call (answered, refused, settled): a later request for it is never run here. */
  finish(sessionId: string, toolRequestId: string): void {
    const key = keyOf(sessionId, toolRequestId);
    this.#calls.delete(key);
    this.#calls.set(key, "finished");
    if (this.#calls.size > this.#limit) this.#forgetOldestFinished();
  }

  /** The page does not hold the call (another page claimed it, or the link broke): Core may request it again. */
  release(sessionId: string, toolRequestId: string): void {
    this.#calls.delete(keyOf(sessionId, toolRequestId));
  }

  #forgetOldestFinished(): void {
    for (const [key, state] of this.#calls) {
      if (state !== "finished") continue;
      this.#calls.delete(key);
      return;
    }
  }
}

function keyOf(sessionId: string, toolRequestId: string): string {
  return `${sessionId}\n${toolRequestId}`;
}
