import type { Activity, PedelecError, TokenUsage } from "@kaoruisaac/pedelec";
import type { PedelecSessionHookStatus, SessionChatMessage } from "@kaoruisaac/pedelec/react";
import { useState, type ReactNode } from "react";

/** How the latest turn ended: "completed", or the code it stopped with (TURN_CANCELLED, PROVIDER_FAILED…). */
export type TurnOutcome = "completed" | PedelecError["code"];

export interface ChatPanelProps {
  status: PedelecSessionHookStatus;
  messages: readonly SessionChatMessage[];
  activity: readonly Activity[];
  /** The tokens the session used so far, as its provider reported them. */
  usage: TokenUsage;
  error: PedelecError | null;
  lastTurn: TurnOutcome | null;
  onSend(text: string): void;
  onCancel(): void;
}

/** The conversation with the agent: messages as they stream, what it is doing, errors, and Send / Cancel. */
export function ChatPanel({ status, messages, activity, usage, error, lastTurn, onSend, onCancel }: ChatPanelProps): ReactNode {
  const [draft, setDraft] = useState("");
  const canSend = status === "idle" && draft.trim() !== "";
  // A turn is on while the agent works and while it waits for a tool's answer (the edit dialog, say).
  const turnActive = status === "running" || status === "waiting_tool_result";
  return (
    <section className="chat-panel" aria-label="Agent">
      <p className="status-line">
        Status <span id="status">{status}</span>
        {lastTurn !== null && (
          <span id="turn-outcome" data-outcome={lastTurn}>
            {lastTurn === "completed" ? "last turn completed" : `last turn: ${lastTurn}`}
          </span>
        )}
      </p>
      <p className="usage-line" id="usage">
        {usageText(usage)}
      </p>
      <ol id="messages" className="messages" aria-live="polite">
        {messages.map((message) => (
          <li key={message.id} className={`message ${message.role}`} aria-busy={!message.complete}>
            {message.text}
          </li>
        ))}
      </ol>
      <form
        className="composer"
        onSubmit={(event) => {
          event.preventDefault();
          if (!canSend) return;
          onSend(draft.trim());
          setDraft("");
        }}
      >
        <textarea
          id="message"
          aria-label="Message"
          rows={2}
          value={draft}
          placeholder="Ask the agent, e.g. “Tidy up the meeting note”"
          onChange={(event) => setDraft(event.target.value)}
        />
        <button id="send" type="submit" disabled={!canSend}>
          Send
        </button>
        <button id="cancel" type="button" disabled={!turnActive} onClick={onCancel}>
          Cancel
        </button>
      </form>
      {error !== null && (
        <p id="error" role="alert" data-code={error.code}>
          {error.code}: {error.message}
        </p>
      )}
      <h2>Activity</h2>
      <ol id="activity" className="activity">
        {activity.map((item) => (
          <li key={item.id} data-kind={item.kind} data-status={item.status}>
            {item.title}
          </li>
        ))}
      </ol>
    </section>
  );
}

/** "1,200 in (1,000 cached) · 25 out" from what the provider reported; "no tokens reported yet" before anything. */
export function usageText(usage: TokenUsage): string {
  const count = (value: number): string => value.toLocaleString("en-US");
  const parts: string[] = [];
  if (usage.inputTokens !== undefined) {
    parts.push(`${count(usage.inputTokens)} in${usage.cachedInputTokens === undefined ? "" : ` (${count(usage.cachedInputTokens)} cached)`}`);
  }
  if (usage.outputTokens !== undefined) parts.push(`${count(usage.outputTokens)} out`);
  if (parts.length === 0 && usage.totalTokens !== undefined) parts.push(`${count(usage.totalTokens)} in all`);
  return parts.length === 0 ? "no tokens reported yet" : `Tokens: ${parts.join(" · ")}`;
}
