import type { SessionStatus, TurnKind } from "./domain.js";
import { PedelecError } from "./pedelec-error.js";
import type { PendingToolCall, SessionEndReason, SessionEvent, SessionEventOf } from "./session-events.js";
import {
  EMPTY_TOOL_CALL_LEDGER,
  addToolCall,
  answerRefusal,
  claimToolCall,
  releaseToolClaims,
  settleToolCall,
  waitingToolCall,
  type ToolCallClaim,
  type ToolCallLedger,
} from "./session-tool-calls.js";
import { nextSessionStatus, type SessionStatusTrigger } from "./session-transitions.js";
import { REMEMBERED_SETTLEMENTS, type ToolCallOutcome } from "./settled-tool-calls.js";
import type { WireError } from "./wire-error.js";

/**
 * How many turn ids a session remembers, to recognise a request sent again after a lost link: a page whose link broke
 * with sendText in flight cannot know whether it arrived and sends it again under the same turn id.
 */
export const REMEMBERED_TURN_IDS = 64;

/** The turn a session runs: accepted, then begun (its turn-started is out), then stopping once it was told to stop. */
export interface MachineTurn {
  readonly turnId: string;
  readonly turnKind: TurnKind;
  readonly begun: boolean;
  /** The turn was stopped (cancelled, ended, timed out…): its tool calls settle, and it does not go on after them. */
  readonly stopping: boolean;
}

/**
 * Everything Core's session and the testing kit's stand-in know about a session's state, as plain data. The machine
 * changes it only through `stepSession`; the shells around it own processes, timers and the store.
 */
export interface SessionMachineState {
  readonly sessionId: string;
  readonly status: SessionStatus;
  /** The seq of the newest event; the next one gets seq + 1. */
  readonly seq: number;
  /** Set when the session starts ending; the status becomes `ended` once its turn is over. */
  readonly ended: boolean;
  /** True once any turn ran (here or before a Core restart): there is nothing left to prepare. */
  readonly hadTurn: boolean;
  readonly activeTurn: MachineTurn | null;
  /** The newest 64 turn ids this session accepted: each starts a turn once. */
  readonly startedTurnIds: readonly string[];
  readonly toolCalls: ToolCallLedger;
}

/** A session's state when it is created, or rebuilt from Core's store (status, last seq, whether a turn ran). */
export function sessionMachineState(options: { sessionId: string; status?: SessionStatus; seq?: number; hadTurn?: boolean }): SessionMachineState {
  return {
    sessionId: options.sessionId,
    status: options.status ?? "idle",
    seq: options.seq ?? 0,
    ended: false,
    hadTurn: options.hadTurn ?? false,
    activeTurn: null,
    startedTurnIds: [],
    toolCalls: EMPTY_TOOL_CALL_LEDGER,
  };
}

/** The events that carry no state of the machine's: the shell publishes them through it, and it numbers them. */
export type PublishedSessionEvent = SessionEventOf<
  "chat-delta" | "chat-completed" | "activity-updated" | "artifact-created" | "usage-updated" | "error-reported"
>;

/** Everything that can happen to a session. */
export type SessionMachineInput =
  /**
   * A page asks for a turn (`sendText`, or `prepareSession` with `turnKind: "prepare"`). `startedEarlier` says whether
   * an earlier Core started this id (its store); `canPrepare` whether the provider keeps a conversation to prepare.
   */
  | { type: "turn-requested"; turnId: string; turnKind: TurnKind; canPrepare?: boolean; startedEarlier?: (turnId: string) => boolean }
  /** The accepted turn begins, after the request was answered. */
  | { type: "turn-began"; turnId: string }
  /** The turn was told to stop; its tool calls settle on their own inputs. */
  | { type: "turn-stopping"; turnId: string }
  /** The turn is over: completed without `error`, failed with it. */
  | { type: "turn-ended"; turnId: string; error?: WireError }
  /** A turn an earlier Core left running (its provider reaped) ends with this error. */
  | { type: "interrupted-turn-failed"; turnId: string; turnKind: TurnKind; error: WireError }
  | { type: "tool-call-requested"; call: PendingToolCall }
  | { type: "tool-call-claimed"; toolRequestId: string; claimant: string }
  | { type: "tool-call-answered"; toolRequestId: string; claimant?: string | undefined }
  /** The call stopped waiting without an answer: its timeout passed, its caller went away, or its turn stopped. */
  | { type: "tool-call-settled"; toolRequestId: string; outcome: Exclude<ToolCallOutcome, "answered"> }
  /** The pages `isGone` matches left: the calls they claimed and did not answer are requested again. */
  | { type: "tool-claims-released"; isGone: (claimant: string) => boolean }
  /**
   * The runtime holding the session vanished without a word (the testing kit's killed desktop): the turn and its calls
   * are gone, no event is sent, and the status stays what the store last had.
   */
  | { type: "core-lost"; outcome: Exclude<ToolCallOutcome, "answered"> }
  | { type: "session-ending" }
  | { type: "session-ended"; reason: SessionEndReason }
  | { type: "event-published"; event: PublishedSessionEvent };
export type SessionMachineInputType = SessionMachineInput["type"];
export type SessionMachineInputOf<T extends SessionMachineInputType> = Extract<SessionMachineInput, { type: T }>;

/** How a tool call's settlement went: it was not waiting, it settled, or it settled and its turn runs again. */
export type ToolCallSettling = "not-pending" | "settled" | "resumed";

/** What each input answers its shell, besides the events. */
export interface SessionMachineOutcomes {
  "turn-requested": "accepted" | "started-before" | "nothing-to-prepare";
  "turn-began": undefined;
  "turn-stopping": undefined;
  "turn-ended": undefined;
  "interrupted-turn-failed": undefined;
  "tool-call-requested": undefined;
  "tool-call-claimed": ToolCallClaim;
  "tool-call-answered": ToolCallSettling;
  "tool-call-settled": ToolCallSettling;
  "tool-claims-released": PendingToolCall[];
  "core-lost": { turn: MachineTurn | null; calls: PendingToolCall[] };
  /** False when the session had already ended. */
  "session-ending": boolean;
  "session-ended": undefined;
  "event-published": undefined;
}

/** An event and the seq the machine gave it. */
export interface NumberedSessionEvent {
  readonly seq: number;
  readonly event: SessionEvent;
}

/** One step: the next state, the events to send in order, what the input answers, or why it was refused. */
export type SessionStep<T extends SessionMachineInputType = SessionMachineInputType> =
  | { state: SessionMachineState; events: NumberedSessionEvent[]; outcome: SessionMachineOutcomes[T]; refusal?: undefined }
  | { state: SessionMachineState; events: []; outcome?: undefined; refusal: PedelecError };

/** The refusal of anything asked of a session that has ended. */
export function sessionEndedError(sessionId: string): PedelecError {
  return new PedelecError("SESSION_ENDED", `session ${sessionId} has ended`);
}

/** The refusal of a tool call made while no turn runs. */
export function noTurnRunningError(sessionId: string): PedelecError {
  return new PedelecError("INVALID_INPUT", `no turn is running in thread ${sessionId}; tools can only be called during a turn`);
}

/**
 * The session machine's one step: pure, so Core, the testing kit and tests drive the same logic. Status changes
 * follow SESSION_TRANSITIONS; every event gets the next seq; a status-changed event goes out only on a change.
 */
export function stepSession<I extends SessionMachineInput>(state: SessionMachineState, input: I): SessionStep<I["type"]> {
  const step = new Step(state);
  const outcome = apply(step, input);
  if (outcome instanceof PedelecError) return { state, events: [], refusal: outcome };
  return { state: step.state, events: step.events, outcome: outcome as SessionMachineOutcomes[I["type"]] };
}

/** The state and events of a step being taken. */
class Step {
  readonly events: NumberedSessionEvent[] = [];
  constructor(public state: SessionMachineState) {}

  emit(event: SessionEvent): void {
    const seq = this.state.seq + 1;
    this.state = { ...this.state, seq };
    this.events.push({ seq, event });
  }

  /** Moves the status by the table; a trigger the table lacks in this status is a bug in the machine. */
  move(trigger: SessionStatusTrigger, turnId?: string): void {
    const { status } = this.state;
    const next = nextSessionStatus(status, trigger);
    if (next === undefined) throw new Error(`the session machine has no transition for ${trigger} in status ${status}`);
    if (next === status) return;
    this.state = { ...this.state, status: next };
    this.emit(turnId === undefined ? { type: "status-changed", status: next } : { type: "status-changed", status: next, turnId });
  }

  update(patch: Partial<SessionMachineState>): void {
    this.state = { ...this.state, ...patch };
  }
}

type Answer = SessionMachineOutcomes[SessionMachineInputType] | PedelecError;

function apply(step: Step, input: SessionMachineInput): Answer {
  const { state } = step;
  switch (input.type) {
    case "turn-requested":
      return requestTurn(step, input);
    case "turn-began": {
      const turn = state.activeTurn;
      if (turn?.turnId !== input.turnId || turn.begun) return undefined;
      step.update({ activeTurn: { ...turn, begun: true } });
      step.emit({ type: "turn-started", turnId: turn.turnId, turnKind: turn.turnKind });
      step.move("turn-started", turn.turnId);
      return undefined;
    }
    case "turn-stopping": {
      const turn = state.activeTurn;
      if (turn?.turnId === input.turnId && !turn.stopping) step.update({ activeTurn: { ...turn, stopping: true } });
      return undefined;
    }
    case "turn-ended":
      endTurn(step, input);
      return undefined;
    case "interrupted-turn-failed":
      if (state.ended || state.activeTurn !== null) return undefined;
      step.move("interrupted-turn-failed", input.turnId);
      step.emit({ type: "turn-failed", turnId: input.turnId, turnKind: input.turnKind, error: input.error });
      return undefined;
    case "tool-call-requested": {
      if (state.ended) return sessionEndedError(state.sessionId);
      const turn = state.activeTurn;
      if (turn === null || !turn.begun || turn.turnId !== input.call.turnId) return noTurnRunningError(state.sessionId);
      step.update({ toolCalls: addToolCall(state.toolCalls, input.call) });
      step.emit({ type: "tool-call-requested", ...input.call });
      step.move("tool-call-requested", turn.turnId);
      return undefined;
    }
    case "tool-call-claimed": {
      if (state.ended) return sessionEndedError(state.sessionId);
      const waiting = waitingToolCall(state.toolCalls, input.toolRequestId);
      if (waiting instanceof PedelecError) return waiting;
      const { ledger, claim } = claimToolCall(state.toolCalls, waiting, input.claimant);
      step.update({ toolCalls: ledger });
      return claim;
    }
    case "tool-call-answered": {
      if (state.ended) return sessionEndedError(state.sessionId);
      const waiting = waitingToolCall(state.toolCalls, input.toolRequestId);
      if (waiting instanceof PedelecError) return waiting;
      return answerRefusal(waiting, input.claimant) ?? settle(step, input.toolRequestId, "answered");
    }
    case "tool-call-settled":
      return settle(step, input.toolRequestId, input.outcome);
    case "tool-claims-released": {
      const { ledger, released } = releaseToolClaims(state.toolCalls, input.isGone);
      step.update({ toolCalls: ledger });
      for (const call of released) step.emit({ type: "tool-call-requested", ...call });
      return released;
    }
    case "core-lost": {
      const turn = state.activeTurn;
      const calls = state.toolCalls.waiting.map((entry) => entry.call);
      let toolCalls = state.toolCalls;
      for (const call of calls) toolCalls = settleToolCall(toolCalls, call.toolRequestId, input.outcome);
      step.update({ activeTurn: null, toolCalls });
      return { turn, calls };
    }
    case "session-ending":
      if (state.ended) return false;
      step.update({ ended: true });
      return true;
    case "session-ended":
      if (!state.ended || state.status === "ended") return undefined;
      // The shells end the turn first; one they gave up on ends with the session, and its calls wait no more.
      if (state.activeTurn !== null) {
        const abandoned = state.toolCalls.waiting.map(({ call }) => ({ toolRequestId: call.toolRequestId, outcome: "abandoned" as const }));
        step.update({
          activeTurn: null,
          toolCalls: { waiting: [], settled: [...state.toolCalls.settled, ...abandoned].slice(-REMEMBERED_SETTLEMENTS) },
        });
      }
      step.move("session-ended");
      step.emit({ type: "session-ended", reason: input.reason });
      return undefined;
    case "event-published":
      step.emit(input.event);
      return undefined;
  }
}

function requestTurn(step: Step, input: SessionMachineInputOf<"turn-requested">): Answer {
  const { state } = step;
  const { turnId } = input;
  // A turn id started before (a request sent again after a lost link) starts nothing, even once the session ended.
  if (state.startedTurnIds.includes(turnId) || input.startedEarlier?.(turnId) === true) return "started-before";
  if (state.ended) return sessionEndedError(state.sessionId);
  if (state.activeTurn !== null) return new PedelecError("SESSION_BUSY", `session ${state.sessionId} is already running a turn`);
  if (input.turnKind === "prepare" && (state.hadTurn || input.canPrepare !== true)) return "nothing-to-prepare";
  const startedTurnIds = [...state.startedTurnIds, turnId];
  step.update({
    activeTurn: { turnId, turnKind: input.turnKind, begun: false, stopping: false },
    hadTurn: true,
    startedTurnIds: startedTurnIds.length > REMEMBERED_TURN_IDS ? startedTurnIds.slice(1) : startedTurnIds,
  });
  return "accepted";
}

/**
 * The turn leaves its status first, so a page whose sendText() settles on the turn's end already shows it; a turn
 * failing because its session ends leaves the status to the end. Calls still waiting settle first, cancelled.
 */
function endTurn(step: Step, input: SessionMachineInputOf<"turn-ended">): void {
  const turn = step.state.activeTurn;
  if (turn?.turnId !== input.turnId) return;
  step.update({ activeTurn: { ...turn, stopping: true } });
  for (const entry of step.state.toolCalls.waiting) {
    if (entry.call.turnId === turn.turnId) settle(step, entry.call.toolRequestId, "cancelled");
  }
  step.update({ activeTurn: null });
  const { error } = input;
  if (error === undefined) {
    step.move("turn-completed", turn.turnId);
    step.emit({ type: "turn-completed", turnId: turn.turnId, turnKind: turn.turnKind });
    return;
  }
  step.move(step.state.ended ? "turn-failed-while-ending" : error.code === "TURN_CANCELLED" ? "turn-cancelled" : "turn-failed", turn.turnId);
  step.emit({ type: "turn-failed", turnId: turn.turnId, turnKind: turn.turnKind, error });
}

/** A waiting call stops waiting; its turn runs again when it was the turn's last one and the turn goes on. */
function settle(step: Step, toolRequestId: string, outcome: ToolCallOutcome): ToolCallSettling {
  const waiting = step.state.toolCalls.waiting.find((entry) => entry.call.toolRequestId === toolRequestId);
  if (waiting === undefined) return "not-pending";
  step.update({ toolCalls: settleToolCall(step.state.toolCalls, toolRequestId, outcome) });
  const { turnId } = waiting.call;
  step.emit({ type: "tool-call-settled", turnId, toolRequestId, outcome });
  const turn = step.state.activeTurn;
  if (turn?.turnId !== turnId || turn.stopping || step.state.toolCalls.waiting.length > 0) return "settled";
  step.move("tool-calls-drained", turnId);
  return "resumed";
}
