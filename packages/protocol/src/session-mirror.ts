import type { SessionStatus, TurnKind } from "./domain.js";
import type { SessionEvent } from "./session-events.js";
import { SESSION_TRANSITIONS, statusAfterLinkLost } from "./session-transitions.js";

/** The turn a mirror knows to be under way: its turn-started came and its end did not yet. */
export interface MirroredTurn {
  readonly turnId: string;
  readonly turnKind: TurnKind;
}

/**
 * What a page knows of a session's state from Core's events and answers, as plain data: the status it shows, the turn
 * under way and whether the session ended. The page changes it only through `stepSessionMirror`.
 */
export interface SessionMirrorState {
  readonly status: SessionStatus;
  readonly activeTurn: MirroredTurn | null;
  readonly ended: boolean;
}

/** What moves a page's mirror. */
export type SessionMirrorInput =
  /**
   * Core's create / resume / re-attach answer: where the session is now, and where the events it replays lead.
   */
  | { type: "info-received"; status: SessionStatus; activeTurn: MirroredTurn | null }
  /**
   * One of Core's events. A `replayed` one (up to the seq of the latest answer) changes nothing: the answer already
   * holds where it leads, and replaying its status changes would only flicker.
   */
  | { type: "event-received"; event: SessionEvent; replayed?: boolean }
  /** The link to Core broke, which Core cannot report over it (see statusAfterLinkLost). */
  | { type: "link-lost"; ownTurnUnderWay: boolean }
  /** The page ended the session itself, before Core's word of it. */
  | { type: "session-left" };

/**
 * One step of the mirror. `irregular` names a status change the transition table has no trigger for from the mirrored
 * status (events missed, or the page's own `error` after a lost link): Core's status is taken anyway, since Core owns
 * it, and the page goes on as before; the field is there for tests and diagnostics.
 */
export interface SessionMirrorStep {
  readonly state: SessionMirrorState;
  readonly irregular?: { readonly from: SessionStatus; readonly to: SessionStatus };
}

const ENDED: SessionMirrorState = Object.freeze({ status: "ended", activeTurn: null, ended: true });

/** A mirror of a session as Core's answer describes it. */
export function sessionMirrorState(options: { status: SessionStatus; activeTurn?: MirroredTurn | null }): SessionMirrorState {
  return { status: options.status, activeTurn: options.activeTurn ?? null, ended: options.status === "ended" };
}

/**
 * Whether the transition table (SESSION_TRANSITIONS, which Core's session machine follows) moves `from` to `to` by
 * some trigger. The machine sends a status change only when the status differs, so staying is never one.
 */
export function isSessionStatusTransition(from: SessionStatus, to: SessionStatus): boolean {
  return from !== to && Object.values(SESSION_TRANSITIONS[from]).includes(to);
}

/**
 * The page's mirror of the session machine: pure, so the page and its tests share it. The status follows Core's
 * status-changed events, checked against the same transition table Core's machine moves by; `ended` is final.
 */
export function stepSessionMirror(state: SessionMirrorState, input: SessionMirrorInput): SessionMirrorStep {
  if (state.ended) return { state };
  switch (input.type) {
    case "info-received":
      return { state: sessionMirrorState(input) };
    case "link-lost":
      return { state: { ...state, status: statusAfterLinkLost(state.status, input.ownTurnUnderWay) } };
    case "session-left":
      return { state: ENDED };
    case "event-received":
      return input.replayed === true ? { state } : applyEvent(state, input.event);
  }
}

function applyEvent(state: SessionMirrorState, event: SessionEvent): SessionMirrorStep {
  switch (event.type) {
    case "status-changed": {
      if (event.status === state.status) return { state };
      // `ended` is final: the session's turn is over with it.
      const next = event.status === "ended" ? ENDED : { ...state, status: event.status };
      if (isSessionStatusTransition(state.status, event.status)) return { state: next };
      return { state: next, irregular: { from: state.status, to: event.status } };
    }
    case "turn-started":
      return { state: { ...state, activeTurn: { turnId: event.turnId, turnKind: event.turnKind } } };
    case "turn-completed":
    case "turn-failed":
      return state.activeTurn?.turnId === event.turnId ? { state: { ...state, activeTurn: null } } : { state };
    case "session-ended":
      return { state: ENDED };
    default:
      return { state };
  }
}
