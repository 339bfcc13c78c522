import { randomUUID } from "node:crypto";
import type { Activity } from "@pedelec/protocol/session-events";
import type { ProviderEvent } from "../provider-adapter.js";
import { StreamBookkeeping, type StreamLineCounts } from "../stream-bookkeeping.js";
import { truncateUtf8 } from "../truncate-utf8.js";
import { CLAUDE_SYNTHETIC_MODEL, isClaudeLoginRequiredText } from "./claude-login-text.js";
import {
  classifyClaudeStreamLine,
  isClaudeContentBlockDelta,
  isClaudeMessageStart,
  isClaudeTextBlock,
  isClaudeTextDelta,
  isClaudeToolResultBlock,
  isClaudeToolUseBlock,
  type ClaudeAssistantLine,
  type ClaudeResultLine,
  type ClaudeStreamEvent,
  type ClaudeStreamLine,
  type ClaudeToolResultBlock,
  type ClaudeUserLine,
} from "./claude-stream-schema.js";
import { describeClaudeToolUse } from "./claude-tool-activity.js";

export const ACTIVITY_DETAIL_MAX_BYTES = 4 * 1024;

/** Text blocks of one message are separated like paragraphs, in deltas and in the completed text alike. */
const BLOCK_SEPARATOR = "\n\n";

/** How the run's `result` line ended the turn. */
export type ClaudeTurnResult = { ok: true; text: string } | { ok: false; subtype: string; message: string };

/** What the parser learned from a whole run, read once stdout is drained. */
export interface ClaudeStreamSummary extends StreamLineCounts {
  providerSessionId: string | null;
  /** Null when no valid `result` line came. */
  result: ClaudeTurnResult | null;
  /** Claude Code's own sign-in prompt, when the run showed it. */
  notAuthenticatedText: string | null;
}

export interface ClaudeStreamParserOptions {
  /** Prefix of ids made up for messages that carry none. Random by default, so ids differ between runs. */
  messageIdPrefix?: string;
}

interface MessageText {
  /** Everything sent as text deltas so far. */
  deltaText: string;
  /** Content block index of the last text delta, to know when a new block starts. */
  lastDeltaIndex: number | null;
  /** Text blocks seen in `assistant` lines (Claude Code may send one line per block, all with one id). */
  blocks: string[];
  completedText: string | null;
}

/**
 * Turns Claude Code's stream-json, one stdout line at a time, into normalized provider events.
 * One parser per run.
 */
export class ClaudeStreamParser {
  readonly #messageIdPrefix: string;
  #messageCounter = 0;
  #providerSessionId: string | null = null;
  #result: ClaudeTurnResult | null = null;
  #notAuthenticatedText: string | null = null;
  readonly #lines = new StreamBookkeeping("claude");

  readonly #messages = new Map<string, MessageText>();
  /** The main agent's message being streamed (from message_start until the next one). */
  #stream: { id: string; stopped: boolean } | null = null;
  /** A message with text whose completion waits for its last block. */
  #pendingCompletionId: string | null = null;
  #completedAnyText = false;
  readonly #openActivities = new Map<string, { kind: Activity["kind"]; title: string }>();

  constructor(options: ClaudeStreamParserOptions = {}) {
    this.#messageIdPrefix = options.messageIdPrefix ?? `claude-${randomUUID().slice(0, 8)}`;
  }

  /** Feeds one stdout line (without its newline). */
  feed(text: string): ProviderEvent[] {
    return this.#lines.feed(text, classifyClaudeStreamLine, (classified, events) => this.#read(classified, events));
  }

  #read(classified: ClaudeStreamLine, events: ProviderEvent[]): void {
    switch (classified.kind) {
      case "system-init":
        this.#sessionStarted(classified.line.session_id, events);
        break;
      case "stream-event":
        // Subagent (Task tool) streams are the subagent's own talk, not chat text of the main agent.
        if (!classified.line.parent_tool_use_id) this.#streamEvent(classified.line.event, events);
        break;
      case "assistant":
        this.#assistant(classified.line, events);
        break;
      case "user":
        this.#user(classified.line, events);
        break;
      case "result":
        this.#resultLine(classified.line, events);
        break;
    }
  }

  /** Notes a stdout line that was too long to keep; it still counts as output. */
  lineDropped(): ProviderEvent[] {
    return this.#lines.lineDropped();
  }

  /** Ends the run: completes any message still open. */
  finish(): ProviderEvent[] {
    const events: ProviderEvent[] = [];
    this.#completeAll(events);
    return events;
  }

  summary(): ClaudeStreamSummary {
    return {
      providerSessionId: this.#providerSessionId,
      result: this.#result,
      notAuthenticatedText: this.#notAuthenticatedText,
      ...this.#lines.counts(),
    };
  }

  #sessionStarted(providerSessionId: string, events: ProviderEvent[]): void {
    if (providerSessionId === this.#providerSessionId) return;
    this.#providerSessionId = providerSessionId;
    events.push({ type: "provider-session-started", providerSessionId });
  }

  #streamEvent(event: ClaudeStreamEvent, events: ProviderEvent[]): void {
    if (isClaudeMessageStart(event)) {
      const messageId = event.message.id;
      if (this.#pendingCompletionId !== null && this.#pendingCompletionId !== messageId) this.#completePending(events);
      this.#stream = { id: messageId, stopped: false };
      return;
    }
    if (isClaudeContentBlockDelta(event)) {
      const { delta, index } = event;
      // Only visible text is chat; thinking and tool-input deltas are not.
      if (!isClaudeTextDelta(delta) || delta.text === "") return;
      this.#stream ??= { id: this.#newMessageId(), stopped: false };
      const message = this.#messageText(this.#stream.id);
      const piece = message.deltaText !== "" && message.lastDeltaIndex !== index ? BLOCK_SEPARATOR + delta.text : delta.text;
      message.lastDeltaIndex = index;
      message.deltaText += piece;
      events.push({ type: "text-delta", messageId: this.#stream.id, delta: piece });
      return;
    }
    if (event.type === "message_stop" && this.#stream) {
      this.#stream.stopped = true;
      if (this.#pendingCompletionId === this.#stream.id) this.#completePending(events);
    }
  }

  #assistant(line: ClaudeAssistantLine, events: ProviderEvent[]): void {
    const blocks = line.message.content;
    const texts: string[] = [];
    for (const block of blocks) if (isClaudeTextBlock(block) && block.text !== "") texts.push(block.text);

    if (this.#isLoginPrompt(line, texts)) {
      this.#notAuthenticatedText ??= texts.join(BLOCK_SEPARATOR) || String(line.error);
      return;
    }

    if (!line.parent_tool_use_id && texts.length > 0) {
      const messageId = line.message.id ?? this.#stream?.id ?? this.#newMessageId();
      if (this.#pendingCompletionId !== null && this.#pendingCompletionId !== messageId) this.#completePending(events);
      const message = this.#messageText(messageId);
      message.blocks.push(...texts);
      const fullText = message.blocks.join(BLOCK_SEPARATOR);
      // Text that never came as deltas (no --include-partial-messages, or a lost line) is sent as one delta,
      // so whoever listens only to deltas still sees all of it.
      if (fullText.startsWith(message.deltaText) && fullText.length > message.deltaText.length) {
        events.push({ type: "text-delta", messageId, delta: fullText.slice(message.deltaText.length) });
        message.deltaText = fullText;
      }
      this.#pendingCompletionId = messageId;
      // Lines that follow the stream's message_stop cannot be followed by more blocks of the same message.
      if (this.#stream?.id === messageId && this.#stream.stopped) this.#completePending(events);
    }

    for (const block of blocks) {
      if (!isClaudeToolUseBlock(block)) continue;
      const { kind, title } = describeClaudeToolUse(block.name, block.input);
      this.#openActivities.set(block.id, { kind, title });
      events.push({ type: "activity", activity: { id: block.id, kind, status: "started", title } });
    }
  }

  #isLoginPrompt(line: ClaudeAssistantLine, texts: string[]): boolean {
    if (line.error === "authentication_failed") return true;
    return line.message.model === CLAUDE_SYNTHETIC_MODEL && texts.some((text) => isClaudeLoginRequiredText(text));
  }

  #user(line: ClaudeUserLine, events: ProviderEvent[]): void {
    // The agent acts on what it said; its message is complete.
    if (!line.parent_tool_use_id) this.#completePending(events);
    const content = line.message.content;
    if (typeof content === "string") return;
    for (const block of content) {
      if (!isClaudeToolResultBlock(block)) continue;
      const opened = this.#openActivities.get(block.tool_use_id);
      // A result without its tool_use (lost in a dropped line) has nothing to complete.
      if (!opened) continue;
      this.#openActivities.delete(block.tool_use_id);
      events.push({
        type: "activity",
        activity: {
          id: block.tool_use_id,
          kind: opened.kind,
          status: block.is_error ? "failed" : "completed",
          title: opened.title,
          detail: truncateUtf8(toolResultText(block), ACTIVITY_DETAIL_MAX_BYTES).text,
        },
      });
    }
  }

  #resultLine(line: ClaudeResultLine, events: ProviderEvent[]): void {
    this.#completeAll(events);
    if (line.session_id) this.#sessionStarted(line.session_id, events);
    const text = line.result ?? "";
    const failed = line.is_error === true || line.subtype.startsWith("error");
    if (failed) {
      const errors = (line.errors ?? []).map((entry) => (typeof entry === "string" ? entry : JSON.stringify(entry)));
      const message = text.trim() || errors.join("; ") || `claude reported ${line.subtype}`;
      if (isClaudeLoginRequiredText(message)) this.#notAuthenticatedText ??= message;
      this.#result = { ok: false, subtype: line.subtype, message };
      return;
    }
    this.#result = { ok: true, text };
    // The final answer is also in the result; show it when no assistant line carried it.
    if (!this.#completedAnyText && text.trim() !== "") {
      const messageId = this.#newMessageId();
      events.push({ type: "text-delta", messageId, delta: text });
      events.push({ type: "message-completed", messageId, text });
      this.#completedAnyText = true;
    }
  }

  #completePending(events: ProviderEvent[]): void {
    const messageId = this.#pendingCompletionId;
    if (messageId === null) return;
    this.#pendingCompletionId = null;
    const message = this.#messages.get(messageId);
    if (!message || message.blocks.length === 0) return;
    this.#complete(messageId, message, message.blocks.join(BLOCK_SEPARATOR), events);
  }

  /** Completes the pending message, and messages that only ever came as deltas (their assistant line lost). */
  #completeAll(events: ProviderEvent[]): void {
    this.#completePending(events);
    for (const [messageId, message] of this.#messages) {
      if (message.completedText === null && message.deltaText !== "") {
        this.#complete(messageId, message, message.deltaText, events);
      }
    }
  }

  #complete(messageId: string, message: MessageText, text: string, events: ProviderEvent[]): void {
    if (message.completedText === text) return;
    message.completedText = text;
    this.#completedAnyText = true;
    events.push({ type: "message-completed", messageId, text });
  }

  #messageText(messageId: string): MessageText {
    let message = this.#messages.get(messageId);
    if (!message) {
      message = { deltaText: "", lastDeltaIndex: null, blocks: [], completedText: null };
      this.#messages.set(messageId, message);
    }
    return message;
  }

  #newMessageId(): string {
    this.#messageCounter += 1;
    return `${this.#messageIdPrefix}-${this.#messageCounter}`;
  }
}

function toolResultText(block: ClaudeToolResultBlock): string {
  const content = block.content;
  if (content === undefined || content === null) return "";
  if (typeof content === "string") return content;
  return content
    .map((part) => {
      if (part.type === "text" && typeof part.text === "string") return part.text;
      return `[${part.type}]`;
    })
    .join("\n");
}
