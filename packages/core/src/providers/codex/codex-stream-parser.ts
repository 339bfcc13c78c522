import { randomUUID } from "node:crypto";
import type { PedelecError } from "@pedelec/protocol/pedelec-error";
import type { Activity } from "@pedelec/protocol/session-events";
import type { TokenUsage } from "@pedelec/protocol/token-usage";
import type { CliStreamOutput, CliStreamParser } from "../cli-runner.js";
import { isCredentialRefusalStatus, quotedHttpStatus } from "../model-service-status.js";
import type { ProviderEvent } from "../provider-adapter.js";
import { scrubbedWithin, scrubSecrets } from "../provider-text-scrubber.js";
import { RetryNotice } from "../retry-notice.js";
import { StreamBookkeeping, type StreamLineCounts } from "../stream-bookkeeping.js";
import { codexNotAuthenticatedError, isCodexLoginRequiredText } from "./codex-login-text.js";
import {
  classifyCodexStreamLine,
  isCodexAgentMessage,
  isCodexCommandExecution,
  isCodexFileChange,
  isCodexMcpToolCall,
  isCodexWebSearch,
  type CodexItem,
  type CodexItemLine,
  type CodexStreamLine,
  type CodexUsage,
} from "./codex-stream-schema.js";

export const ACTIVITY_TITLE_MAX_BYTES = 4 * 1024;
export const ACTIVITY_DETAIL_MAX_BYTES = 4 * 1024;

/** How the run's turn ended, from its `turn.completed` / `turn.failed` line. */
export type CodexTurnEnd = { ok: true } | { ok: false; message: string };

/** What the parser learned from a whole run, read once stdout is drained. */
export interface CodexStreamSummary extends StreamLineCounts {
  providerSessionId: string | null;
  /** Null when neither `turn.completed` nor `turn.failed` came. */
  turnEnd: CodexTurnEnd | null;
  /** Messages of `error` events, in order (codex also reports retried connection failures this way). */
  errorMessages: string[];
  /** codex saying it has no valid sign-in, when the run showed it. */
  notAuthenticatedText: string | null;
  /** JSON lines of types the adapter does not read. */
  unknownLineCount: number;
  /** The turn's tokens from `turn.completed`, null when it reported none. */
  usage: TokenUsage | null;
}

export interface CodexStreamParserOptions {
  /**
   * Prefix of message and activity ids. codex numbers items `item_0`, `item_1`, … afresh in every run, so ids are
   * made unique per run; random by default.
   */
  idPrefix?: string;
}

/** What an item shows up as among activities; null for items that are not activities (reasoning, plans, …). */
function describeItem(item: CodexItem): { kind: Activity["kind"]; title: string; detail?: string; failed: boolean } | null {
  if (isCodexCommandExecution(item)) {
    const failed = item.status === "failed" || item.status === "declined" || (item.exit_code ?? 0) !== 0;
    return { kind: "command", title: item.command, detail: item.aggregated_output ?? "", failed };
  }
  if (isCodexFileChange(item)) {
    return {
      kind: "file-edit",
      title: item.changes.map((change) => change.path).join(", ") || "file change",
      detail: item.changes.map((change) => `${change.kind}: ${change.path}`).join("\n"),
      failed: item.status === "failed",
    };
  }
  if (isCodexMcpToolCall(item)) {
    const failed = item.status === "failed" || (item.error !== undefined && item.error !== null);
    return { kind: "tool", title: item.server === "" ? item.tool : `${item.server}.${item.tool}`, detail: item.error?.message, failed };
  }
  if (isCodexWebSearch(item)) return { kind: "web-search", title: item.query, failed: false };
  return null;
}

/**
 * codex's notice that a request to the model's service failed and it tries again: `Reconnecting... 2/5 (<why>)`, or
 * `Reconnecting... waiting for network (<why>)` for a service it cannot reach (which it retries forever).
 */
const RECONNECTING = /^Reconnecting\.\.\.\s*(?:(\d+)\/(\d+)|(waiting for network))\s*(?:\((.*)\))?\s*$/s;

/**
 * Turns `codex exec --json` output, one stdout line at a time, into normalized provider events. codex sends each
 * agent message whole (`item.completed`), never as text deltas. Its reconnects show as one notice activity per
 * series; a refused key (which codex retries five times, ~7 s) asks the runner to stop the turn at the first.
 * One parser per run.
 */
export class CodexStreamParser implements CliStreamParser<CodexStreamSummary> {
  readonly #idPrefix: string;
  #providerSessionId: string | null = null;
  #turnEnd: CodexTurnEnd | null = null;
  readonly #errorMessages: string[] = [];
  #notAuthenticatedText: string | null = null;
  #usage: TokenUsage | null = null;
  /** Set once the stream showed a refused key; handed to the runner with the line that showed it. */
  #stopError: PedelecError | null = null;
  #stopRequested = false;
  readonly #lines = new StreamBookkeeping("codex");
  readonly #reconnects: RetryNotice;
  readonly #completedMessages = new Set<string>();
  /** Activities reported as started, by item id, and those already settled. */
  readonly #openActivities = new Set<string>();
  readonly #settledActivities = new Set<string>();

  constructor(options: CodexStreamParserOptions = {}) {
    this.#idPrefix = options.idPrefix ?? `codex-${randomUUID().slice(0, 8)}`;
    this.#reconnects = new RetryNotice(this.#idPrefix);
  }

  /** Feeds one stdout line (without its newline). */
  feed(text: string): CliStreamOutput[] {
    const outputs: CliStreamOutput[] = this.#lines.feed(text, classifyCodexStreamLine, (classified, events) => this.#read(classified, events));
    if (this.#stopError !== null && !this.#stopRequested) {
      this.#stopRequested = true;
      outputs.push({ type: "turn-stop-requested", error: this.#stopError });
    }
    return outputs;
  }

  #read(classified: CodexStreamLine, events: ProviderEvent[]): void {
    switch (classified.kind) {
      case "thread-started":
        if (classified.threadId !== this.#providerSessionId) {
          this.#providerSessionId = classified.threadId;
          events.push({ type: "provider-session-started", providerSessionId: classified.threadId });
        }
        break;
      case "item":
        // An item means the request codex was retrying got its answer.
        this.#reconnects.end("completed", events);
        this.#item(classified.line, events);
        break;
      case "turn-completed":
        this.#reconnects.end("completed", events);
        this.#turnEnd = { ok: true };
        this.#reportUsage(classified.usage, events);
        break;
      case "turn-failed":
        this.#reconnects.end("failed", events);
        this.#noteAuth(classified.message);
        this.#turnEnd = { ok: false, message: classified.message };
        break;
      case "error":
        this.#errorMessages.push(classified.message);
        this.#errorLine(classified.message, events);
        break;
    }
  }

  /**
   * An `error` event: a reconnect notice, or a failure codex reports (it may still recover). A reconnect on a refused
   * key cannot succeed on any later attempt, so the turn stops at the first.
   */
  #errorLine(message: string, events: ProviderEvent[]): void {
    const reconnecting = RECONNECTING.exec(message.trim());
    if (reconnecting === null) {
      this.#noteAuth(message);
      return;
    }
    const [, attempt, attempts, waitingForNetwork, quoted = ""] = reconnecting;
    const reason = quoted.trim();
    if (isCredentialRefusalStatus(quotedHttpStatus(reason)) || isCodexLoginRequiredText(reason)) {
      this.#notAuthenticatedText ??= reason || message;
      this.#reconnects.end("failed", events);
      this.#stopError ??= codexNotAuthenticatedError(reason || message);
      return;
    }
    const title =
      waitingForNetwork !== undefined
        ? `Codex is reconnecting: waiting for network${reason === "" ? "" : ` (${reason})`}`
        : `Codex is reconnecting: ${reason.replace(/[.\s]+$/, "") || "the request failed"}, attempt ${attempt} of ${attempts}`;
    this.#reconnects.attempt(title, undefined, events);
  }

  /**
   * `turn.completed.usage` covers all the turn's requests. codex counts like the OpenAI API: `cached_input_tokens` is
   * part of `input_tokens`, and `reasoning_output_tokens` part of `output_tokens` (codex's own total is input plus
   * output), so reasoning is in the output count without being added a second time.
   */
  #reportUsage(usage: CodexUsage | undefined, events: ProviderEvent[]): void {
    if (usage === undefined) return;
    const reported: TokenUsage = {};
    if (usage.input_tokens !== undefined) reported.inputTokens = usage.input_tokens;
    if (usage.output_tokens !== undefined) reported.outputTokens = usage.output_tokens;
    if (usage.cached_input_tokens !== undefined) reported.cachedInputTokens = usage.cached_input_tokens;
    if (reported.inputTokens === undefined && reported.outputTokens === undefined) return;
    reported.totalTokens = (reported.inputTokens ?? 0) + (reported.outputTokens ?? 0);
    this.#usage = reported;
    events.push({ type: "usage", usage: reported });
  }

  /** Notes a stdout line that was too long to keep; it still counts as output. */
  lineDropped(): ProviderEvent[] {
    return this.#lines.lineDropped();
  }

  /** Ends the run. Messages arrive whole, so only a reconnect series the run never got past is left to end. */
  finish(): ProviderEvent[] {
    const events: ProviderEvent[] = [];
    this.#reconnects.end("failed", events);
    return events;
  }

  summary(): CodexStreamSummary {
    return {
      providerSessionId: this.#providerSessionId,
      turnEnd: this.#turnEnd,
      errorMessages: [...this.#errorMessages],
      notAuthenticatedText: this.#notAuthenticatedText,
      ...this.#lines.counts(),
      unknownLineCount: this.#lines.unknownLineCount,
      usage: this.#usage,
    };
  }

  #noteAuth(message: string): void {
    if (isCodexLoginRequiredText(message)) this.#notAuthenticatedText ??= message;
  }

  #item(line: CodexItemLine, events: ProviderEvent[]): void {
    const { item } = line;
    const id = `${this.#idPrefix}-${item.id}`;
    const completed = line.type === "item.completed";
    if (isCodexAgentMessage(item)) {
      if (!completed || item.text === "" || this.#completedMessages.has(id)) return;
      this.#completedMessages.add(id);
      events.push({ type: "message-completed", messageId: id, text: item.text });
      return;
    }
    const described = describeItem(item);
    if (described === null || this.#settledActivities.has(id)) return;
    const title = scrubbedWithin(described.title, ACTIVITY_TITLE_MAX_BYTES, scrubSecrets);
    if (!completed) {
      if (this.#openActivities.has(id)) return;
      this.#openActivities.add(id);
      events.push({ type: "activity", activity: { id, kind: described.kind, status: "started", title } });
      return;
    }
    this.#openActivities.delete(id);
    this.#settledActivities.add(id);
    const activity: Activity = { id, kind: described.kind, status: described.failed ? "failed" : "completed", title };
    if (described.detail !== undefined) activity.detail = scrubbedWithin(described.detail, ACTIVITY_DETAIL_MAX_BYTES, scrubSecrets);
    events.push({ type: "activity", activity });
  }
}
