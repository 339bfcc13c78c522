import { PedelecError } from "./pedelec-error.js";

/** How a tool call stopped waiting for a page. */
export type ToolCallOutcome = "answered" | "timed-out" | "cancelled" | "abandoned";

/** How many settled calls are remembered, so a late claim or result gets the reason rather than "unknown". */
const REMEMBERED_SETTLEMENTS = 512;

/**
 * The tool calls of one session that no longer wait, newest 512, and the error a late claim or result for one of them
 * gets: TOOL_TIMEOUT for a call that timed out, TOOL_CALL_NOT_PENDING otherwise.
 */
export class SettledToolCalls {
  /** toolRequestId → how it settled; insertion order is settle order, so the oldest are dropped first. */
  readonly #outcomes = new Map<string, ToolCallOutcome>();

  remember(toolRequestId: string, outcome: ToolCallOutcome): void {
    this.#outcomes.set(toolRequestId, outcome);
    if (this.#outcomes.size <= REMEMBERED_SETTLEMENTS) return;
    const oldest = this.#outcomes.keys().next().value;
    if (oldest !== undefined) this.#outcomes.delete(oldest);
  }

  /** The error for a claim or result of `toolRequestId`, which is not (or no longer) waiting. */
  notPending(toolRequestId: string): PedelecError {
    const outcome = this.#outcomes.get(toolRequestId);
    if (outcome === "timed-out") {
      return new PedelecError("TOOL_TIMEOUT", `tool call ${toolRequestId} timed out before its result arrived; the agent was told so`);
    }
    return new PedelecError("TOOL_CALL_NOT_PENDING", `tool call ${toolRequestId} is not waiting for a result`, {
      toolRequestId,
      ...(outcome === undefined ? {} : { settled: outcome }),
    });
  }
}
