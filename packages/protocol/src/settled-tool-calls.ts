import { PedelecError } from "./pedelec-error.js";

/** How a tool call stopped waiting for a page. */
export type ToolCallOutcome = "answered" | "timed-out" | "cancelled" | "abandoned";

/** How many settled calls are remembered, so a late claim or result gets the reason rather than "unknown". */
export const REMEMBERED_SETTLEMENTS = 512;

/**
 * The error for a claim or result of a call that does not wait (any more): TOOL_TIMEOUT when it timed out,
 * TOOL_CALL_NOT_PENDING otherwise, naming how it settled when that is known.
 */
export function notPendingToolCallError(toolRequestId: string, outcome: ToolCallOutcome | undefined): PedelecError {
  if (outcome === "timed-out") {
    return new PedelecError("TOOL_TIMEOUT", `tool call ${toolRequestId} timed out before its result arrived; the agent was told so`);
  }
  return new PedelecError("TOOL_CALL_NOT_PENDING", `tool call ${toolRequestId} is not waiting for a result`, {
    toolRequestId,
    ...(outcome === undefined ? {} : { settled: outcome }),
  });
}
