import type { Activity, PedelecError, PedelecEventContext, PedelecSession } from "@kaoruisaac/pedelec";
import type { ChatTranscript } from "./chat-transcript.js";

/**
 * The codes with which the SDK tells a page that the desktop side went away under its session: Core stopped or
 * crashed, the native host died, Core's socket broke. The session itself lives on in Core's store; the SDK re-attaches
 * on the page's next call.
 */
const CORE_LOST_CODES: ReadonlySet<string> = new Set(["CORE_RUNTIME_UNAVAILABLE", "NATIVE_CONNECTION_CLOSED", "IPC_UNAVAILABLE"]);

/** The line the chat shows when Core goes away. */
export const CORE_LOST_NOTE = "Core stopped: your session resumes on the next message.";

/** True for an error that says Core (or the link to it) went away, rather than that something failed in it. */
export function isCoreLost(error: PedelecError): boolean {
  return CORE_LOST_CODES.has(error.code);
}

/** Where the page shows what one session does. */
export interface SessionView {
  readonly transcript: ChatTranscript;
  /** `key` is unique across turns. */
  showActivity(key: string, activity: Activity): void;
  /** Activities still under way will not be finished by their turn: show them as stopped. */
  stopOpenActivities(): void;
  reportError(error: PedelecError): void;
  /** The session's status, or whether Core is lost, changed. */
  statusChanged(): void;
}

/** A followed session: whether Core is lost right now (the error that said so), and how to stop following. */
export interface FollowedSession {
  coreLost(): PedelecError | undefined;
  detach(): void;
}

/**
 * Wires one session's callbacks to the view. When the SDK reports that Core went away (an `onError` with one of the
 * codes above, during a turn or while idle), the page stops looking busy: the streaming message is closed, running
 * activities are shown as stopped, and a note says the session resumes on the next message. The first event Core sends
 * again (the re-attached session's status, the next turn's output) ends that state.
 */
export function followSession(session: PedelecSession, view: SessionView): FollowedSession {
  let lost: PedelecError | undefined;
  let detached = false;
  const isCurrent = (context: PedelecEventContext): boolean => !detached && context.sessionId === session.sessionId;
  const coreSpoke = (context: PedelecEventContext): void => {
    if (context.source !== "core" || lost === undefined) return;
    lost = undefined;
    view.statusChanged();
  };
  const unsubscribers = [
    session.onChatDelta((delta, context) => {
      if (!isCurrent(context)) return;
      coreSpoke(context);
      view.transcript.appendDelta(delta, context.messageId);
    }),
    session.onChat((message, context) => {
      if (!isCurrent(context)) return;
      coreSpoke(context);
      view.transcript.completeMessage(message.text, message.messageId);
    }),
    session.onStatus((_status, context) => {
      if (!isCurrent(context)) return;
      coreSpoke(context);
      view.statusChanged();
    }),
    session.onActivity((activity, context) => {
      if (!isCurrent(context)) return;
      coreSpoke(context);
      view.showActivity(`${context.turnId ?? "-"}:${activity.id}`, activity);
    }),
    session.onError((error, context) => {
      if (!isCurrent(context)) return;
      view.reportError(error);
      if (!isCoreLost(error)) return;
      const wasLost = lost !== undefined;
      lost = error;
      view.transcript.closeOpenMessage();
      view.stopOpenActivities();
      if (!wasLost) view.transcript.addNote(CORE_LOST_NOTE);
      view.statusChanged();
    }),
    session.onEnded((context) => {
      if (!isCurrent(context)) return;
      lost = undefined;
      view.transcript.closeOpenMessage();
      view.stopOpenActivities();
      view.transcript.addNote("The session ended.");
      view.statusChanged();
    }),
  ];
  return {
    coreLost: () => lost,
    detach: () => {
      detached = true;
      for (const unsubscribe of unsubscribers) unsubscribe();
    },
  };
}
