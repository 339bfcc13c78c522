import { randomUUID } from "node:crypto";
import type { PedelecError } from "@pedelec/protocol/pedelec-error";
import type { Activity } from "@pedelec/protocol/session-events";
import type { TokenUsage } from "@pedelec/protocol/token-usage";
import type { CliStreamOutput, CliStreamParser } from "../cli-runner.js";
import { isCredentialRefusalStatus } from "../model-service-status.js";
import type { ProviderEvent } from "../provider-adapter.js";
import { scrubbedWithin, scrubSecrets } from "../provider-text-scrubber.js";
import { RetryNotice } from "../retry-notice.js";
import { StreamBookkeeping, type StreamLineCounts } from "../stream-bookkeeping.js";
import { CLAUDE_SYNTHETIC_MODEL, claudeNotAuthenticatedError, isClaudeLoginRequiredText } from "./claude-login-text.js";
import {
  classifyClaudeStreamLine,
  isClaudeContentBlockDelta,
  isClaudeMessageDelta,
  isClaudeMessageStart,
  isClaudeTextBlock,
  isClaudeTextDelta,
  isClaudeToolResultBlock,
  isClaudeToolUseBlock,
  type ClaudeApiRetryLine,
  type ClaudeAssistantLine,
  type ClaudeResultLine,
  type ClaudeStreamEvent,
  type ClaudeStreamLine,
  type ClaudeToolResultBlock,
  type ClaudeUserLine,
} from "./claude-stream-schema.js";
import { describeClaudeToolUse } from "./claude-tool-activity.js";
import { ClaudeUsageTally } from "./claude-usage.js";

export const ACTIVITY_DETAIL_MAX_BYTES = 4 * 1024;

/** Text blocks of one message are separated like paragraphs, in deltas and in the completed text alike. */
const BLOCK_SEPARATOR = "\n\n";

/** How the run's `result` line ended the turn. */
export type ClaudeTurnResult = { ok: true; text: string } | { ok: false; subtype: string; message: string; terminalReason: string | null };

/** What the parser learned from a whole run, read once stdout is drained. */
export interface ClaudeStreamSummary extends StreamLineCounts {
  providerSessionId: string | null;
  /** Null when no valid `result` line came. */
  result: ClaudeTurnResult | null;
  /** Claude Code's own sign-in prompt, when the run showed it. */
  notAuthenticatedText: string | null;
  /**
   * The HTTP status of the failed request to the model's service that ended the run (the result's or the synthetic
   * error message's `api_error_status`), or of a refused key Claude Code was retrying; null when none was reported.
   */
  apiErrorStatus: number | null;
  /** The turn's tokens as last reported, null when the run reported none. */
  usage: TokenUsage | null;
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
 * Turns Claude Code's stream-json, one stdout line at a time, into normalized provider events. Retries of failed
 * requests to the model's service show as one notice activity per series; a refused key (HTTP 401 / 403, which Claude
 * Code would retry for minutes) asks the runner to stop the turn at once. One parser per run.
 */
export class ClaudeStreamParser implements CliStreamParser<ClaudeStreamSummary> {
  readonly #messageIdPrefix: string;
  #messageCounter = 0;
  #providerSessionId: string | null = null;
  #result: ClaudeTurnResult | null = null;
  #notAuthenticatedText: string | null = null;
  #apiErrorStatus: number | null = null;
  /** Set once the stream showed a refused key; handed to the runner with the line that showed it. */
  #stopError: PedelecError | null = null;
  #stopRequested = false;
  readonly #lines = new StreamBookkeeping("claude");
  readonly #retries: RetryNotice;
  readonly #usage = new ClaudeUsageTally();

  readonly #messages = new Map<string, MessageText>();
  /** The main agent's message being streamed (from message_start until the next one). */
  #stream: { id: string; stopped: boolean } | null = null;
  /** A message with text whose completion waits for its last block. */
  #pendingCompletionId: string | null = null;
  #completedAnyText = false;
  readonly #openActivities = new Map<string, { kind: Activity["kind"]; title: string }>();

  constructor(options: ClaudeStreamParserOptions = {}) {
    this.#messageIdPrefix = options.messageIdPrefix ?? `claude-${randomUUID().slice(0, 8)}`;
    this.#retries = new RetryNotice(this.#messageIdPrefix);
  }

  /** Feeds one stdout line (without its newline). */
  feed(text: string): CliStreamOutput[] {
    const outputs: CliStreamOutput[] = this.#lines.feed(text, classifyClaudeStreamLine, (classified, events) => {
      this.#read(classified, events);
      this.#usage.report(events);
    });
    if (this.#stopError !== null && !this.#stopRequested) {
      this.#stopRequested = true;
      outputs.push({ type: "turn-stop-requested", error: this.#stopError });
    }
    return outputs;
  }

  #read(classified: ClaudeStreamLine, events: ProviderEvent[]): void {
    switch (classified.kind) {
      case "system-init":
        this.#sessionStarted(classified.line.session_id, events);
        break;
      case "api-retry":
        this.#apiRetry(classified.line, events);
        break;
      case "stream-event":
        // The stream going on is what ends a retry series: the request it retried got its answer.
        this.#retries.end("completed", events);
        // Subagent (Task tool) streams are the subagent's own talk, not chat text of the main agent.
        if (!classified.line.parent_tool_use_id) this.#streamEvent(classified.line.event, events);
        break;
      case "assistant":
        this.#assistant(classified.line, events);
        break;
      case "user":
        this.#retries.end("completed", events);
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

  /** Ends the run: completes any message still open, and fails a retry series the run never got past. */
  finish(): ProviderEvent[] {
    const events: ProviderEvent[] = [];
    this.#completeAll(events);
    this.#retries.end("failed", events);
    return events;
  }

  summary(): ClaudeStreamSummary {
    return {
      providerSessionId: this.#providerSessionId,
      result: this.#result,
      notAuthenticatedText: this.#notAuthenticatedText,
      apiErrorStatus: this.#apiErrorStatus,
      usage: this.#usage.reported,
      ...this.#lines.counts(),
    };
  }

  /**
   * A failed request that Claude Code retries. A refused key will be refused again on every attempt (ten by default,
   * over about three minutes), so the turn stops now; anything else is shown while it lasts.
   */
  #apiRetry(line: ClaudeApiRetryLine, events: ProviderEvent[]): void {
    const status = line.error_status ?? null;
    if (isCredentialRefusalStatus(status)) {
      this.#apiErrorStatus = status;
      this.#retries.end("failed", events);
      const said = [line.error, status === null ? null : `HTTP ${status}`].filter((part) => part).join(", ");
      this.#stopError ??= claudeNotAuthenticatedError(said || "the key was refused", status);
      return;
    }
    const cause =
      line.error && line.error !== "unknown"
        ? line.error.replaceAll("_", " ")
        : status === null
          ? "could not reach the model's service"
          : "the model's service failed";
    const attempt =
      line.attempt === undefined
        ? ""
        : line.max_retries === undefined
          ? `, attempt ${line.attempt}`
          : `, attempt ${line.attempt} of ${line.max_retries}`;
    const title = `Claude is retrying: ${cause}${status === null ? "" : ` (HTTP ${status})`}${attempt}`;
    const detail = line.retry_delay_ms === undefined ? undefined : `next attempt in ${(line.retry_delay_ms / 1000).toFixed(1)} s`;
    this.#retries.attempt(title, detail, events);
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
      this.#usage.noteMessage(messageId, event.message.usage);
      return;
    }
    if (isClaudeMessageDelta(event)) {
      if (this.#stream) this.#usage.noteMessage(this.#stream.id, event.usage);
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
      if (line.api_error_status !== undefined && line.api_error_status !== null) this.#apiErrorStatus = line.api_error_status;
      this.#retries.end("failed", events);
      return;
    }
    // The message Claude Code writes when a request failed for good is its error report, not the agent talking:
    // the result line that follows carries the same text, and the turn fails with it.
    if (isApiErrorMessage(line)) {
      if (line.api_error_status !== undefined && line.api_error_status !== null) this.#apiErrorStatus = line.api_error_status;
      this.#retries.end("failed", events);
      return;
    }
    this.#retries.end("completed", events);
    if (line.message.id !== undefined) this.#usage.noteMessage(line.message.id, line.message.usage);

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
      const described = describeClaudeToolUse(block.name, block.input);
      const kind = described.kind;
      const title = scrubSecrets(described.title);
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
          detail: scrubbedWithin(toolResultText(block), ACTIVITY_DETAIL_MAX_BYTES, scrubSecrets),
        },
      });
    }
  }

  #resultLine(line: ClaudeResultLine, events: ProviderEvent[]): void {
    this.#completeAll(events);
    if (line.session_id) this.#sessionStarted(line.session_id, events);
    this.#usage.noteRunTotal(line.usage);
    const text = line.result ?? "";
    // `subtype` says "success" also for a run that ended on a failed request (claude 2.1.332); `is_error` tells.
    const failed = line.is_error === true || line.subtype.startsWith("error");
    this.#retries.end(failed ? "failed" : "completed", events);
    if (failed) {
      const errors = (line.errors ?? []).map((entry) => (typeof entry === "string" ? entry : JSON.stringify(entry)));
      const message = text.trim() || errors.join("; ") || `claude reported ${line.subtype}`;
      if (line.api_error_status !== undefined && line.api_error_status !== null) this.#apiErrorStatus = line.api_error_status;
      if (isClaudeLoginRequiredText(message) || isCredentialRefusalStatus(this.#apiErrorStatus)) this.#notAuthenticatedText ??= message;
      this.#result = { ok: false, subtype: line.subtype, message, terminalReason: line.terminal_reason ?? null };
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

/** True for the synthetic message that reports a request to the model's service that failed for good. */
function isApiErrorMessage(line: ClaudeAssistantLine): boolean {
  if (line.is_api_error_message === true) return true;
  if (line.api_error_status !== undefined && line.api_error_status !== null) return true;
  return line.message.model === CLAUDE_SYNTHETIC_MODEL && typeof line.error === "string" && line.error !== "";
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
