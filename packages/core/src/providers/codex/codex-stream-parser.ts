import { randomUUID } from "node:crypto";
import type { Activity } from "@pedelec/protocol/session-events";
import type { ProviderEvent } from "../provider-adapter.js";
import { StreamBookkeeping, type StreamLineCounts } from "../stream-bookkeeping.js";
import { truncateUtf8 } from "../truncate-utf8.js";
import { isCodexLoginRequiredText } from "./codex-login-text.js";
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
 * Turns `codex exec --json` output, one stdout line at a time, into normalized provider events. codex sends each
 * agent message whole (`item.completed`), never as text deltas. One parser per run.
 */
export class CodexStreamParser {
  readonly #idPrefix: string;
  #providerSessionId: string | null = null;
  #turnEnd: CodexTurnEnd | null = null;
  readonly #errorMessages: string[] = [];
  #notAuthenticatedText: string | null = null;
  readonly #lines = new StreamBookkeeping("codex");
  readonly #completedMessages = new Set<string>();
  /** Activities reported as started, by item id, and those already settled. */
  readonly #openActivities = new Set<string>();
  readonly #settledActivities = new Set<string>();

  constructor(options: CodexStreamParserOptions = {}) {
    this.#idPrefix = options.idPrefix ?? `codex-${randomUUID().slice(0, 8)}`;
  }

  /** Feeds one stdout line (without its newline). */
  feed(text: string): ProviderEvent[] {
    return this.#lines.feed(text, classifyCodexStreamLine, (classified, events) => this.#read(classified, events));
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
        this.#item(classified.line, events);
        break;
      case "turn-completed":
        this.#turnEnd = { ok: true };
        break;
      case "turn-failed":
        this.#noteAuth(classified.message);
        this.#turnEnd = { ok: false, message: classified.message };
        break;
      case "error":
        this.#noteAuth(classified.message);
        this.#errorMessages.push(classified.message);
        break;
    }
  }

  /** Notes a stdout line that was too long to keep; it still counts as output. */
  lineDropped(): ProviderEvent[] {
    return this.#lines.lineDropped();
  }

  /** Ends the run. Messages arrive whole, so nothing is left open to complete. */
  finish(): ProviderEvent[] {
    return [];
  }

  summary(): CodexStreamSummary {
    return {
      providerSessionId: this.#providerSessionId,
      turnEnd: this.#turnEnd,
      errorMessages: [...this.#errorMessages],
      notAuthenticatedText: this.#notAuthenticatedText,
      ...this.#lines.counts(),
      unknownLineCount: this.#lines.unknownLineCount,
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
    const title = truncateUtf8(described.title, ACTIVITY_TITLE_MAX_BYTES).text;
    if (!completed) {
      if (this.#openActivities.has(id)) return;
      this.#openActivities.add(id);
      events.push({ type: "activity", activity: { id, kind: described.kind, status: "started", title } });
      return;
    }
    this.#openActivities.delete(id);
    this.#settledActivities.add(id);
    const activity: Activity = { id, kind: described.kind, status: described.failed ? "failed" : "completed", title };
    if (described.detail !== undefined) activity.detail = truncateUtf8(described.detail, ACTIVITY_DETAIL_MAX_BYTES).text;
    events.push({ type: "activity", activity });
  }
}
