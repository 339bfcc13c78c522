import { PedelecError } from "@pedelec/protocol/pedelec-error";
import type { ToolResultOutcome } from "@pedelec/protocol/requests";

export type ToolCallSettlement =
  | { outcome: "answered"; result: ToolResultOutcome }
  | { outcome: "timed-out" | "cancelled" | "abandoned"; error: PedelecError };

interface PendingCall {
  turnId: string;
  settle: (settlement: ToolCallSettlement) => void;
}

/**
 * Tool calls waiting for the page. Each wait ends exactly once: the page answers, the tool's timeout passes,
 * the turn is cancelled (signal), or the agent's CLI went away (also the signal).
 */
export class ToolCallWaiter {
  readonly #pending = new Map<string, PendingCall>();

  get size(): number {
    return this.#pending.size;
  }

  wait(toolRequestId: string, turnId: string, timeoutMs: number, signal: AbortSignal): Promise<ToolCallSettlement> {
    return new Promise((resolve) => {
      const finish = (settlement: ToolCallSettlement): void => {
        if (!this.#pending.has(toolRequestId)) return;
        this.#pending.delete(toolRequestId);
        clearTimeout(timer);
        signal.removeEventListener("abort", onAbort);
        resolve(settlement);
      };
      const timer = setTimeout(() => {
        finish({
          outcome: "timed-out",
          error: new PedelecError("TOOL_TIMEOUT", `the application did not answer within ${timeoutMs} ms`),
        });
      }, timeoutMs);
      const onAbort = (): void => {
        const reason: unknown = signal.reason;
        const error = reason instanceof PedelecError ? reason : new PedelecError("TURN_CANCELLED", "the tool call was cancelled");
        finish({ outcome: error.code === "IPC_UNAVAILABLE" ? "abandoned" : "cancelled", error });
      };
      this.#pending.set(toolRequestId, { turnId, settle: finish });
      if (signal.aborted) onAbort();
      else signal.addEventListener("abort", onAbort, { once: true });
    });
  }

  /** The page's answer; false when nothing waits for it any more (late, duplicate or unknown). */
  answer(toolRequestId: string, result: ToolResultOutcome): boolean {
    const pending = this.#pending.get(toolRequestId);
    if (!pending) return false;
    pending.settle({ outcome: "answered", result });
    return true;
  }
}
