import type { TokenUsage } from "./token-usage.js";

/** The counts a usage report may carry, each on its own. */
export const TOKEN_USAGE_FIELDS = [
  "inputTokens",
  "outputTokens",
  "cachedInputTokens",
  "totalTokens",
] as const satisfies readonly (keyof TokenUsage)[];

/**
 * What a session has used, as Core (and the testing kit's stand-in) keep it. A provider run reports its usage so far,
 * cumulative: each report replaces the run's previous one, field by field, and never lowers a field (a lower count is
 * a provider's mistake, or a report that overtook a newer one, and is ignored for that field). A turn is one run,
 * unless Core had to start the provider afresh during it (its conversation was lost): the new run counts from zero
 * again and its usage adds to the turn's.
 */
export interface SessionUsageState {
  /** Every run before the current one: earlier turns (also before a Core restart) and earlier runs of this turn. */
  readonly settled: TokenUsage;
  /** The turn of the current run; undefined before the first run this state has seen. */
  readonly turnId: string | undefined;
  /** The part of `settled` that earlier runs of the current turn used. */
  readonly turnSettled: TokenUsage;
  /** The current run's usage: the highest count reported for each field. */
  readonly run: TokenUsage;
}

export type SessionUsageInput =
  /** The provider starts (again) for `turnId`: its reports count from zero. */
  | { type: "run-started"; turnId: string }
  /** The provider's usage so far in the current run; a report for another turn starts a run of that turn first. */
  | { type: "reported"; turnId: string; usage: TokenUsage };

/** What a `usage-updated` event carries: the turn's usage so far and the session's total. */
export interface UsageUpdate {
  turnId: string;
  usage: TokenUsage;
  sessionUsage: TokenUsage;
}

/** The state of a session that used `total` before (its stored total after a restart; nothing for a new session). */
export function sessionUsageState(total: TokenUsage = {}): SessionUsageState {
  return { settled: tokenUsageOf(total), turnId: undefined, turnSettled: {}, run: {} };
}

/** The session's total so far: every settled run plus the current one. */
export function sessionUsageTotal(state: SessionUsageState): TokenUsage {
  return addUsage(state.settled, state.run);
}

/**
 * The pure step: the next state, and the update to send when a report changed anything (none when every field it
 * carries is absent, not a count, or not higher than the run's).
 */
export function reduceSessionUsage(state: SessionUsageState, input: SessionUsageInput): { state: SessionUsageState; update?: UsageUpdate } {
  if (input.type === "run-started") return { state: startRun(state, input.turnId) };
  const current = input.turnId === state.turnId ? state : startRun(state, input.turnId);
  let run: Record<string, number> | undefined;
  for (const field of TOKEN_USAGE_FIELDS) {
    const reported = input.usage[field];
    if (!isTokenCount(reported)) continue;
    const previous = current.run[field];
    if (previous !== undefined && reported <= previous) continue;
    run ??= { ...current.run };
    run[field] = reported;
  }
  if (run === undefined) return { state: current };
  const next: SessionUsageState = { ...current, run };
  return {
    state: next,
    update: { turnId: input.turnId, usage: addUsage(next.turnSettled, next.run), sessionUsage: sessionUsageTotal(next) },
  };
}

/** Field by field: a field is present when either side has it; sums stop at the largest count the protocol allows. */
export function addUsage(first: TokenUsage, second: TokenUsage): TokenUsage {
  const sum: TokenUsage = {};
  for (const field of TOKEN_USAGE_FIELDS) {
    const [left, right] = [first[field], second[field]];
    if (left === undefined && right === undefined) continue;
    sum[field] = Math.min((left ?? 0) + (right ?? 0), Number.MAX_SAFE_INTEGER);
  }
  return sum;
}

/** Field by field, the higher of the two: what a reader that must never go back keeps. */
export function highestUsage(first: TokenUsage, second: TokenUsage): TokenUsage {
  const highest: TokenUsage = {};
  for (const field of TOKEN_USAGE_FIELDS) {
    const [left, right] = [first[field], second[field]];
    if (left === undefined && right === undefined) continue;
    highest[field] = Math.max(left ?? 0, right ?? 0);
  }
  return highest;
}

function startRun(state: SessionUsageState, turnId: string): SessionUsageState {
  return {
    settled: sessionUsageTotal(state),
    turnId,
    turnSettled: turnId === state.turnId ? addUsage(state.turnSettled, state.run) : {},
    run: {},
  };
}

/** Only the counts the protocol allows (non-negative safe integers), in the fields it knows. */
function tokenUsageOf(usage: TokenUsage): TokenUsage {
  const kept: TokenUsage = {};
  for (const field of TOKEN_USAGE_FIELDS) {
    const count = usage[field];
    if (isTokenCount(count)) kept[field] = count;
  }
  return kept;
}

function isTokenCount(value: unknown): value is number {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0;
}
