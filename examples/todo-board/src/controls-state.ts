import type { SessionStatus } from "@kaoruisaac/pedelec";

export interface ControlsInput {
  /** A createSession() call is in flight (possibly waiting for the user's approval). */
  connecting: boolean;
  /** The current session's status, or undefined before the first session. */
  status: SessionStatus | undefined;
  /** An End request is in flight. */
  ending: boolean;
  /**
   * A sendText() of this page has not settled yet. The status shows "running" only once Core says so, so Send is held
   * back by this too.
   */
  sending?: boolean;
  /**
   * The SDK reported that Core went away under the session. The session lives on in Core's store and the next message
   * resumes it, so Send stays available whatever status was last seen.
   */
  coreLost?: boolean;
}

export interface ControlsState {
  connect: boolean;
  /** The provider and effort selects: only meaningful before connecting. */
  sessionOptions: boolean;
  send: boolean;
  end: boolean;
}

/** Which controls are enabled. One turn at a time, so Send waits for the session to be idle again. */
export function controlsState({ connecting, status, ending, sending = false, coreLost = false }: ControlsInput): ControlsState {
  const live = status !== undefined && status !== "ended";
  const canConnect = !connecting && !live;
  return {
    connect: canConnect,
    sessionOptions: canConnect,
    // "error" is recoverable: the next message starts a new turn.
    send: live && !ending && !sending && (status === "idle" || status === "error" || coreLost),
    end: live && !ending,
  };
}

/** The status line's text: the session's status, or that Core stopped while it is away (never a stale "running"). */
export function statusLabel({ connecting, status, coreLost = false }: Pick<ControlsInput, "connecting" | "status" | "coreLost">): string {
  if (connecting) return "connecting";
  if (status === undefined) return "not connected";
  if (coreLost && status !== "ended") return "core stopped";
  return status;
}
