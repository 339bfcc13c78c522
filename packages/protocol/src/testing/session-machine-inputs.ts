import fc from "fast-check";
import type { SessionStatus } from "../domain.js";
import type { PendingToolCall } from "../session-events.js";
import type { SessionMachineInput, SessionMachineInputType } from "../session-machine.js";

/** A turn's failures as the machine's inputs carry them. */
export const cancelled = { code: "TURN_CANCELLED" as const, message: "the turn was cancelled" };
export const providerFailed = { code: "PROVIDER_FAILED" as const, message: "the provider failed" };

/** A tool call the agent asked for, with fixed name, arguments and timeout. */
export function pendingCall(toolRequestId: string, turnId = "t1"): PendingToolCall {
  return { turnId, toolRequestId, toolName: "add_todo", args: { title: "milk" }, timeoutMs: 5_000 };
}

/** Makes an input, given the ids of the tool calls made so far and a way to make a new one. */
export type InputMaker = (made: readonly string[], next: () => string) => SessionMachineInput;

/** The ids of the tool calls a random run has made, and the maker of the next one (`r1`, `r2`, …). */
export function toolCallIds(): { made: string[]; next: () => string } {
  const made: string[] = [];
  return {
    made,
    next: () => {
      const id = `r${made.length + 1}`;
      made.push(id);
      return id;
    },
  };
}

/** The statuses a random run starts from: every live one. */
export const liveStartStatus = fc.constantFrom<SessionStatus>("idle", "running", "waiting_tool_result", "error");

/** One of the tool calls made so far, by index (a call never made when there is none). */
const madeCall = (made: readonly string[], index: number): string => made[index % Math.max(made.length, 1)] ?? "none";

const turnIds = fc.constantFrom("t1", "t2", "t3");

/** Each input type of the machine, drawn from a few turn ids, claimants and (by index) the tool calls made so far. */
const INPUTS: { [T in SessionMachineInputType]: fc.Arbitrary<InputMaker> } = {
  "turn-requested": fc.record({ turnId: turnIds, kind: fc.constantFrom("user" as const, "prepare" as const), canPrepare: fc.boolean() }).map(
    ({ turnId, kind, canPrepare }): InputMaker =>
      () => ({ type: "turn-requested", turnId, turnKind: kind, canPrepare }),
  ),
  "turn-began": turnIds.map(
    (turnId): InputMaker =>
      () => ({ type: "turn-began", turnId }),
  ),
  "turn-stopping": turnIds.map(
    (turnId): InputMaker =>
      () => ({ type: "turn-stopping", turnId }),
  ),
  "turn-ended": fc.record({ turnId: turnIds, error: fc.constantFrom(undefined, cancelled, providerFailed) }).map(
    ({ turnId, error }): InputMaker =>
      () =>
        error === undefined ? { type: "turn-ended", turnId } : { type: "turn-ended", turnId, error },
  ),
  "interrupted-turn-failed": turnIds.map(
    (turnId): InputMaker =>
      () => ({ type: "interrupted-turn-failed", turnId, turnKind: "user", error: providerFailed }),
  ),
  "tool-call-requested": turnIds.map(
    (turnId): InputMaker =>
      (_made, next) => ({ type: "tool-call-requested", call: pendingCall(next(), turnId) }),
  ),
  "tool-call-claimed": fc.record({ index: fc.nat(), claimant: fc.constantFrom("tab-a", "tab-b") }).map(
    ({ index, claimant }): InputMaker =>
      (made) => ({ type: "tool-call-claimed", toolRequestId: madeCall(made, index), claimant }),
  ),
  "tool-call-answered": fc.record({ index: fc.nat(), claimant: fc.constantFrom("tab-a", "tab-b", undefined) }).map(
    ({ index, claimant }): InputMaker =>
      (made) => ({ type: "tool-call-answered", toolRequestId: madeCall(made, index), claimant }),
  ),
  "tool-call-settled": fc.record({ index: fc.nat(), outcome: fc.constantFrom("timed-out" as const, "cancelled" as const, "abandoned" as const) }).map(
    ({ index, outcome }): InputMaker =>
      (made) => ({ type: "tool-call-settled", toolRequestId: madeCall(made, index), outcome }),
  ),
  "tool-claims-released": fc.constantFrom("tab-a", "tab-b").map(
    (gone): InputMaker =>
      () => ({ type: "tool-claims-released", isGone: (claimant: string) => claimant === gone }),
  ),
  "core-lost": fc.constantFrom("cancelled" as const, "abandoned" as const).map(
    (outcome): InputMaker =>
      () => ({ type: "core-lost", outcome }),
  ),
  "session-ending": fc.constant<InputMaker>(() => ({ type: "session-ending" })),
  "session-ended": fc.constantFrom("requested" as const, "expired" as const).map(
    (reason): InputMaker =>
      () => ({ type: "session-ended", reason }),
  ),
  "event-published": fc.constant<InputMaker>(() => ({
    type: "event-published",
    event: { type: "chat-delta", turnId: "t1", messageId: "m1", delta: "hi" },
  })),
};

/** Random inputs of every type but those in `without`; keyed by type, so a new input type does not compile until it has one. */
export function machineInputs(without: readonly SessionMachineInputType[] = []): fc.Arbitrary<InputMaker> {
  const kept = (Object.keys(INPUTS) as SessionMachineInputType[]).filter((type) => !without.includes(type));
  return fc.oneof(...kept.map((type) => INPUTS[type]));
}
