import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { SettledToolCalls } from "@pedelec/protocol/settled-tool-calls";
import type { ToolResultOutcome } from "@pedelec/protocol/requests";
import type { PendingToolCall } from "@pedelec/protocol/session-events";

export type ToolCallSettlement =
  | { outcome: "answered"; result: ToolResultOutcome }
  | { outcome: "timed-out" | "cancelled" | "abandoned"; error: PedelecError };

interface PendingCall {
  call: PendingToolCall;
  /** The page route running the call's handler, once one claimed it. */
  claimant: string | undefined;
  settle: (settlement: ToolCallSettlement) => void;
}

/**
 * Tool calls waiting for a page. Each wait ends exactly once: a page answers, the tool's timeout passes, the turn is
 * cancelled (signal), or the agent's CLI went away (also the signal). Of several pages following the session, the one
 * that claims a call first is the only one whose handler runs and whose result counts.
 */
export class ToolCallWaiter {
  readonly #pending = new Map<string, PendingCall>();
  readonly #settled = new SettledToolCalls();

  get size(): number {
    return this.#pending.size;
  }

  /** The calls still waiting, oldest first. */
  pending(): PendingToolCall[] {
    return [...this.#pending.values()].map((entry) => entry.call);
  }

  wait(call: PendingToolCall, signal: AbortSignal): Promise<ToolCallSettlement> {
    const { toolRequestId, timeoutMs } = call;
    return new Promise((resolve) => {
      const finish = (settlement: ToolCallSettlement): void => {
        if (!this.#pending.has(toolRequestId)) return;
        this.#pending.delete(toolRequestId);
        this.#settled.remember(toolRequestId, settlement.outcome);
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
      this.#pending.set(toolRequestId, { call, claimant: undefined, settle: finish });
      if (signal.aborted) onAbort();
      else signal.addEventListener("abort", onAbort, { once: true });
    });
  }

  /**
   * Claims a waiting call for `claimant`: true when it is now (or already was) theirs, false when another page holds
   * it. A call no longer waiting is refused with the reason.
   */
  claim(toolRequestId: string, claimant: string): boolean {
    const pending = this.#requirePending(toolRequestId);
    if (pending.claimant !== undefined && pending.claimant !== claimant) return false;
    pending.claimant = claimant;
    return true;
  }

  /**
   * A page's answer, applied once. Refused when the call timed out (TOOL_TIMEOUT), is no longer waiting
   * (TOOL_CALL_NOT_PENDING), or another page claimed it (TOOL_CALL_CLAIMED).
   */
  answer(toolRequestId: string, result: ToolResultOutcome, claimant?: string): void {
    const pending = this.#requirePending(toolRequestId);
    if (pending.claimant !== undefined && pending.claimant !== claimant) {
      throw new PedelecError("TOOL_CALL_CLAIMED", `tool call ${toolRequestId} is being answered by another page`);
    }
    pending.settle({ outcome: "answered", result });
  }

  /** Drops the claims `isGone` matches; returns the calls that wait unclaimed again, so they can be requested anew. */
  release(isGone: (claimant: string) => boolean): PendingToolCall[] {
    const released: PendingToolCall[] = [];
    for (const pending of this.#pending.values()) {
      if (pending.claimant === undefined || !isGone(pending.claimant)) continue;
      pending.claimant = undefined;
      released.push(pending.call);
    }
    return released;
  }

  #requirePending(toolRequestId: string): PendingCall {
    const pending = this.#pending.get(toolRequestId);
    if (pending !== undefined) return pending;
    throw this.#settled.notPending(toolRequestId);
  }

}
