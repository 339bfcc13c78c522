import { useEffect, useState, useSyncExternalStore } from "react";
import type { ToolArgsMap, ToolDefinition, ToolNameOf } from "../types.js";
import { useCommitEffect } from "./commit-effect.js";
import { usePedelecClientStore } from "./pedelec-provider.js";
import { INACTIVE_STATE, SessionController, sessionKey, type SessionState } from "./session-controller.js";
import type { UsePedelecSessionOptions, UsePedelecSessionResult } from "./types.js";

const inactiveState = (): SessionState => INACTIVE_STATE;

/**
 * Creates an agent session for the component, follows it, and ends it when the component unmounts (which also stops a
 * running turn). The session is created in the browser only, after mount, with the client of the nearest
 * `PedelecProvider`; under Strict Mode's double effects it is still created once. Which option changes create a new
 * session is listed on `UsePedelecSessionOptions`. Throws `INVALID_INPUT` without a `PedelecProvider` above.
 *
 * @example
 * ```tsx
 * function Chat() {
 *   const [draft, setDraft] = useState("");
 *   const { status, messages, activity, usage, error, send, cancel } = usePedelecSession({ provider: "claude" });
 *   return (
 *     <>
 *       {messages.map((message) => <p key={message.id} className={message.role}>{message.text}</p>)}
 *       {activity.map((item) => <small key={item.id}>{item.title}</small>)}
 *       <small>{usage.totalTokens ?? 0} tokens</small>
 *       {error && <p role="alert">{error.message}</p>}
 *       <input value={draft} onChange={(event) => setDraft(event.target.value)} />
 *       <button disabled={status !== "idle"} onClick={() => void send(draft)}>Send</button>
 *       <button disabled={status !== "running" && status !== "waiting_tool_result"} onClick={() => void cancel()}>Stop</button>
 *     </>
 *   );
 * }
 * ```
 */
export function usePedelecSession<const TTools extends readonly ToolDefinition[] = readonly []>(
  options?: UsePedelecSessionOptions<TTools>,
): UsePedelecSessionResult<ToolNameOf<TTools>, ToolArgsMap<TTools>> {
  const clientStore = usePedelecClientStore("usePedelecSession");
  // Kept in state: it outlives Strict Mode's simulated unmount, which is what keeps that to one session.
  const [controller] = useState(() => new SessionController());
  const state = useSyncExternalStore(controller.subscribe, controller.getState, inactiveState);
  const enabled = options?.enabled ?? true;
  const key = sessionKey(options);
  useCommitEffect(() => {
    controller.latestOptions = options;
  });
  useEffect(() => {
    if (!enabled) return;
    // The provider's own client may not be made yet (its effect runs after this one): make it now.
    controller.acquire(clientStore.ensure(), key);
    return () => controller.release();
  }, [controller, clientStore, enabled, key]);
  return {
    session: state.session as UsePedelecSessionResult<ToolNameOf<TTools>, ToolArgsMap<TTools>>["session"],
    status: state.status,
    messages: state.messages,
    activity: state.activity,
    usage: state.usage,
    artifacts: state.artifacts,
    error: state.error,
    send: controller.send,
    cancel: controller.cancel,
  };
}
