import type { SessionStatus } from "./domain.js";

/**
 * What moves a session's status, as the session machine (session-machine.ts) derives it from its inputs: a turn began,
 * the agent called a page tool, the last waiting call of a turn that goes on settled, a turn ended (and how), a turn an
 * earlier Core left running was failed, the session ended.
 */
export const SESSION_STATUS_TRIGGERS = [
  "turn-started",
  "tool-call-requested",
  "tool-calls-drained",
  "turn-completed",
  "turn-cancelled",
  "turn-failed",
  "turn-failed-while-ending",
  "interrupted-turn-failed",
  "session-ended",
] as const;
export type SessionStatusTrigger = (typeof SESSION_STATUS_TRIGGERS)[number];

/** One row of the table: the next status for each trigger allowed in a status. */
export type SessionStatusRow = Readonly<Partial<Record<SessionStatusTrigger, SessionStatus>>>;

/** The same next status from every status a turn can end in (a turn can end before it began, in the testing kit). */
function fromAnyLiveStatus(status: SessionStatus): SessionStatusRow {
  return {
    "turn-started": "running",
    "turn-completed": "idle",
    "turn-cancelled": "idle",
    "turn-failed": "error",
    // A turn that fails because its session is ending leaves the status to the end.
    "turn-failed-while-ending": status,
    "interrupted-turn-failed": "error",
    "session-ended": "ended",
  };
}

/**
 * The session's status machine: status × trigger → next status. A trigger missing from a row cannot happen in that
 * status (the machine refuses the input that would cause it first); `ended` is final. A status-changed event goes out
 * only when the next status differs. docs/architecture/sessions-and-turns.md shows this table, and a test keeps the
 * two equal.
 */
export const SESSION_TRANSITIONS: Readonly<Record<SessionStatus, SessionStatusRow>> = {
  idle: fromAnyLiveStatus("idle"),
  running: { ...fromAnyLiveStatus("running"), "tool-call-requested": "waiting_tool_result" },
  waiting_tool_result: {
    ...fromAnyLiveStatus("waiting_tool_result"),
    "tool-call-requested": "waiting_tool_result",
    "tool-calls-drained": "running",
  },
  error: fromAnyLiveStatus("error"),
  ended: {},
};

/** The next status, or undefined when the table has no such transition. */
export function nextSessionStatus(status: SessionStatus, trigger: SessionStatusTrigger): SessionStatus | undefined {
  return SESSION_TRANSITIONS[status][trigger];
}

/** Statuses in which a turn is under way: Core keeps such a session alive, and a page's lost link fails the turn. */
export const BUSY_SESSION_STATUSES: ReadonlySet<SessionStatus> = new Set<SessionStatus>(["running", "waiting_tool_result"]);

/** Whether a turn is under way in `status` (see BUSY_SESSION_STATUSES). */
export function isBusySessionStatus(status: SessionStatus): boolean {
  return BUSY_SESSION_STATUSES.has(status);
}

/**
 * The status a page shows when its link to Core broke, which Core cannot report over it: `error` when the page's own
 * turn was under way or Core's last word was a busy status, else what it showed. The re-attach brings Core's back.
 */
export function statusAfterLinkLost(status: SessionStatus, ownTurnUnderWay: boolean): SessionStatus {
  return ownTurnUnderWay || isBusySessionStatus(status) ? "error" : status;
}
