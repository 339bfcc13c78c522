import type { PedelecError } from "@pedelec/protocol/pedelec-error";
import type { PedelecSession } from "../pedelec-session.js";
import type { Activity, Artifact, CreateSessionOptions, SendTextOptions, SessionStatus, TokenUsage, ToolDefinition } from "../types.js";

/**
 * The status `usePedelecSession()` reports: the session's own status once it exists, and before that
 * `"inactive"` (nothing is being created: server rendering, `enabled: false`, or the component is not mounted yet)
 * or `"connecting"` (`createSession()` is on its way, possibly waiting for the user's approval). A session that could
 * not be created reports `"error"` with `session: null` and the reason in `error`.
 *
 * @example
 * ```ts
 * const label = (status: PedelecSessionHookStatus) => (status === "connecting" ? "Connecting…" : status);
 * ```
 */
export type PedelecSessionHookStatus = "inactive" | "connecting" | SessionStatus;

/**
 * One entry of the conversation `usePedelecSession()` keeps. A user entry is added by `send()`; an assistant entry
 * grows with each streamed piece (`complete: false`) and is replaced by the completed message (`complete: true`).
 *
 * @example
 * ```tsx
 * const bubble = (message: SessionChatMessage) => (
 *   <p key={message.id} className={message.role} aria-busy={!message.complete}>{message.text}</p>
 * );
 * ```
 */
export interface SessionChatMessage {
  /** Stable across updates: the assistant message's id, or an id the page chose for a user message. */
  readonly id: string;
  /** `"user"` for what `send()` sent, `"assistant"` for what the agent wrote. */
  readonly role: "user" | "assistant";
  /** The text so far (the streamed pieces joined), or the whole text once complete. */
  readonly text: string;
  /** True once the message is final: always for user messages, on the completed message for the assistant. */
  readonly complete: boolean;
}

/**
 * What a `send()` came to. It never rejects, so `onClick={() => send(text)}` leaves no unhandled rejection; a failure
 * is also shown in the hook's `error` (except an intended stop: `TURN_CANCELLED`, `SESSION_ENDED`).
 *
 * @example
 * ```ts
 * const outcome: SendOutcome = await send("Plan the week.");
 * if (!outcome.ok && outcome.error.code === "SESSION_BUSY") showBusyHint();
 * ```
 */
export type SendOutcome =
  | {
      /** The turn completed. */
      readonly ok: true;
    }
  | {
      /** The turn did not complete: see `error`. */
      readonly ok: false;
      /** Why: the failed turn's code (`SESSION_BUSY`, `TURN_CANCELLED`, `SESSION_ENDED`…). */
      readonly error: PedelecError;
    };

/**
 * Options of `usePedelecSession()`: the `createSession()` input plus what the hook itself needs.
 *
 * The session is created from the options of the render that starts it. It is ended and created again when one of
 * these changes (compared by value): `provider`, `model`, `effortLevel`, `effort`, `access`, `workspace.path`,
 * `autoEndOnDisconnect`, `enabled`, and the `PedelecProvider`'s client. `skills` (guidance and tools) are read once,
 * at creation, because a new session is a new conversation: change the component's `key` to start over with other
 * skills. Tool handlers given in `skills.tools` are an exception: each call runs the handler of the latest render.
 *
 * @example
 * ```ts
 * const options: UsePedelecSessionOptions = { provider: "claude", effortLevel: "low", enabled: connected };
 * ```
 */
export type UsePedelecSessionOptions<TTools extends readonly ToolDefinition[] = readonly ToolDefinition[]> = CreateSessionOptions<TTools> & {
  /**
   * False: no session is created (and a live one is ended), e.g. until the user presses "Connect", since the first
   * `createSession()` of an origin opens the extension's approval popup. Default true.
   */
  enabled?: boolean;
};

/**
 * What `usePedelecSession()` returns: the session and its state as plain values that re-render the component when
 * they change, plus `send` and `cancel`, whose identity never changes.
 *
 * @example
 * ```tsx
 * const { status, messages, error, send } = usePedelecSession({ provider: "claude" });
 * return (
 *   <form onSubmit={(event) => { event.preventDefault(); void send(draft); }}>
 *     {messages.map((message) => <p key={message.id}>{message.text}</p>)}
 *     {error && <p role="alert">{error.message}</p>}
 *     <button disabled={status !== "idle"}>Send</button>
 *   </form>
 * );
 * ```
 */
export interface UsePedelecSessionResult<TToolName extends string = string, TToolArgs = Record<TToolName, unknown>> {
  /**
   * The live session handle, for `useTool()` and everything the hook does not wrap; null until it exists. Typed like
   * `createSession()`'s: its tool names and each tool's argument type come from `skills.tools`.
   */
  readonly session: PedelecSession<TToolName, TToolArgs> | null;
  /** See `PedelecSessionHookStatus`. */
  readonly status: PedelecSessionHookStatus;
  /** The conversation of this session in this page, oldest first (a prepare turn's chat is never in it). */
  readonly messages: readonly SessionChatMessage[];
  /**
   * The provider's activity during the latest turn that reported any (commands run, files edited…), in the order
   * each first appeared; an update of an activity (same `id`) replaces it in place.
   */
  readonly activity: readonly Activity[];
  /**
   * The tokens the session used so far, over all its turns (`session.usage`): `{}` before the provider reported any,
   * and while there is no session. It re-renders the component when it changes, at most about once per display frame.
   */
  readonly usage: TokenUsage;
  /**
   * The files the agent wrote into the session's assets folder while this component held the session
   * (`session.onArtifact`), oldest first; a file written again moves to the end with its new size. Read one with
   * `session.readAsset(artifact.path)`; `session.listAssets()` also lists those of earlier page loads.
   */
  readonly artifacts: readonly Artifact[];
  /**
   * The latest error: the session could not be created, a turn failed, the connection was lost, a tool result could
   * not be delivered. Cleared when `send()` sends the next message. Null when there is none.
   */
  readonly error: PedelecError | null;
  /**
   * Sends a user message (added to `messages` at once) and resolves when the turn is over. While the session is
   * being created it waits for it. Never rejects: see `SendOutcome`.
   */
  readonly send: (text: string, options?: SendTextOptions) => Promise<SendOutcome>;
  /**
   * Stops the active turn (the pending `send()` resolves with `TURN_CANCELLED`, which is not an `error`). Resolves once
   * the desktop stopped it; never rejects (a failure goes to `error`). Does nothing without a session.
   */
  readonly cancel: () => Promise<void>;
}
