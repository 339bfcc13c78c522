import type { PendingToolCall } from "./session-events.js";
import { REMEMBERED_SETTLEMENTS, notPendingToolCallError, type ToolCallOutcome } from "./settled-tool-calls.js";
import { PedelecError } from "./pedelec-error.js";

/** A tool call waiting for a page, and the page route running its handler once one claimed it. */
export interface WaitingToolCall {
  readonly call: PendingToolCall;
  readonly claimant: string | undefined;
}

/** A call that no longer waits, and how it stopped waiting. */
export interface SettledToolCall {
  readonly toolRequestId: string;
  readonly outcome: ToolCallOutcome;
}

/**
 * The tool calls of one session, as plain data: those waiting (oldest first), and the newest settled ones, so a late
 * claim or result gets the reason (TOOL_TIMEOUT, TOOL_CALL_NOT_PENDING) rather than "unknown".
 */
export interface ToolCallLedger {
  readonly waiting: readonly WaitingToolCall[];
  readonly settled: readonly SettledToolCall[];
}

export const EMPTY_TOOL_CALL_LEDGER: ToolCallLedger = { waiting: [], settled: [] };

/** How a claim went: the call is now the claimant's, was already, or another page holds it. */
export type ToolCallClaim = "claimed" | "claimed-before" | "held-by-another";

/** The waiting call `toolRequestId`, or the error a claim or result for it gets. */
export function waitingToolCall(ledger: ToolCallLedger, toolRequestId: string): WaitingToolCall | PedelecError {
  const waiting = ledger.waiting.find((entry) => entry.call.toolRequestId === toolRequestId);
  if (waiting !== undefined) return waiting;
  const settled = ledger.settled.findLast((entry) => entry.toolRequestId === toolRequestId);
  return notPendingToolCallError(toolRequestId, settled?.outcome);
}

/** The ledger with `call` waiting, unclaimed. */
export function addToolCall(ledger: ToolCallLedger, call: PendingToolCall): ToolCallLedger {
  return { ...ledger, waiting: [...ledger.waiting, { call, claimant: undefined }] };
}

/** Exactly one page runs each call: the first claimant gets it, later ones are told another page holds it. */
export function claimToolCall(ledger: ToolCallLedger, waiting: WaitingToolCall, claimant: string): { ledger: ToolCallLedger; claim: ToolCallClaim } {
  if (waiting.claimant === claimant) return { ledger, claim: "claimed-before" };
  if (waiting.claimant !== undefined) return { ledger, claim: "held-by-another" };
  return { ledger: replaceWaiting(ledger, waiting, { call: waiting.call, claimant }), claim: "claimed" };
}

/** The refusal of a result from `claimant` for a call another page claimed, or undefined when it may answer. */
export function answerRefusal(waiting: WaitingToolCall, claimant: string | undefined): PedelecError | undefined {
  if (waiting.claimant === undefined || waiting.claimant === claimant) return undefined;
  return new PedelecError("TOOL_CALL_CLAIMED", `tool call ${waiting.call.toolRequestId} is being answered by another page`);
}

/** The ledger without the waiting call, remembered as settled with `outcome` (the newest 512 are kept). */
export function settleToolCall(ledger: ToolCallLedger, toolRequestId: string, outcome: ToolCallOutcome): ToolCallLedger {
  const settled = [...ledger.settled, { toolRequestId, outcome }];
  return {
    waiting: ledger.waiting.filter((entry) => entry.call.toolRequestId !== toolRequestId),
    settled: settled.length > REMEMBERED_SETTLEMENTS ? settled.slice(settled.length - REMEMBERED_SETTLEMENTS) : settled,
  };
}

/** Drops the claims `isGone` matches: the calls wait unclaimed again, in their place, and are returned. */
export function releaseToolClaims(
  ledger: ToolCallLedger,
  isGone: (claimant: string) => boolean,
): { ledger: ToolCallLedger; released: PendingToolCall[] } {
  const released: PendingToolCall[] = [];
  const waiting = ledger.waiting.map((entry) => {
    if (entry.claimant === undefined || !isGone(entry.claimant)) return entry;
    released.push(entry.call);
    return { call: entry.call, claimant: undefined };
  });
  return { ledger: released.length === 0 ? ledger : { ...ledger, waiting }, released };
}

function replaceWaiting(ledger: ToolCallLedger, old: WaitingToolCall, replacement: WaitingToolCall): ToolCallLedger {
  return { ...ledger, waiting: ledger.waiting.map((entry) => (entry === old ? replacement : entry)) };
}
