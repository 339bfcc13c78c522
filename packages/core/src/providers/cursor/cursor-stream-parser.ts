import { randomUUID } from "node:crypto";
import type { Activity } from "@pedelec/protocol/session-events";
import type { CliStreamParser } from "../cli-runner.js";
import type { ProviderEvent } from "../provider-adapter.js";
import { StreamBookkeeping, type StreamLineCounts } from "../stream-bookkeeping.js";
import { isCursorLoginRequiredText } from "./cursor-login-text.js";
import {
  classifyCursorStreamLine,
  type CursorAssistantLine,
  type CursorResultLine,
  type CursorStreamLine,
  type CursorToolCallLine,
} from "./cursor-stream-schema.js";
import { cursorToolOutcome, describeCursorToolCall } from "./cursor-tool-activity.js";

/** How the run's `result` line ended the turn. */
export type CursorTurnResult = { ok: true; text: string } | { ok: false; subtype: string; message: string };

/** What the parser learned from a whole run, read once stdout is drained. */
export interface CursorStreamSummary extends StreamLineCounts {
  providerSessionId: string | null;
  /** Null when no valid `result` line came. */
  result: CursorTurnResult | null;
  /** The message of the first `error` line. */
  errorMessage: string | null;
  /** cursor-agent's own sign-in request, when the stream showed it. */
  notAuthenticatedText: string | null;
  /** JSON lines of types the adapter does not read (user echo, thinking, …). */
  unknownLineCount: number;
}

export interface CursorStreamParserOptions {
  /** Prefix of the ids made up for messages (Cursor gives them none). Random by default. */
  messageIdPrefix?: string;
}

/** Whitespace-free form of a text, to recognise a repeat whatever separators Cursor put between its parts. */
const squeezed = (text: string): string => text.replace(/\s+/g, "");

/**
 * Where in `text` the whitespace-free `prefix` ends (just after its last character), skipping whitespace in `text`;
 * -1 when `text` does not start with it.
 */
function endOfPrefix(text: string, prefix: string): number {
  if (prefix === "") return -1;
  let matched = 0;
  for (let index = 0; index < text.length; index += 1) {
    const character = text[index] ?? "";
    if (/\s/.test(character)) continue;
    if (character !== prefix[matched]) return -1;
    matched += 1;
    if (matched === prefix.length) return index + 1;
  }
  return -1;
}

/**
 * Turns cursor-agent's stream-json, one stdout line at a time, into normalized provider events. One parser per run.
 *
 * With `--stream-partial-output` Cursor repeats text: chunks arrive as they are written (`timestamp_ms`, no
 * `model_call_id`), then the message may come again whole before its tool calls (`model_call_id`), and the whole
 * response once more at the end (no `timestamp_ms`). Chunks become deltas; a whole-text line only completes the
 * message (adding what the chunks missed), and a repeat of text already sent adds nothing, so the deltas of a
 * message add up to that message exactly once.
 */
export class CursorStreamParser implements CliStreamParser<CursorStreamSummary> {
  readonly #messageIdPrefix: string;
  #messageCounter = 0;
  #providerSessionId: string | null = null;
  #result: CursorTurnResult | null = null;
  #errorMessage: string | null = null;
  #notAuthenticatedText: string | null = null;
  readonly #lines = new StreamBookkeeping("cursor");

  /** The message being streamed in chunks. */
  #current: { id: string; text: string } | null = null;
  /** Texts of the messages completed in this run, in order. */
  readonly #completedTexts: string[] = [];
  readonly #openActivities = new Map<string, { kind: Activity["kind"]; title: string }>();

  constructor(options: CursorStreamParserOptions = {}) {
    this.#messageIdPrefix = options.messageIdPrefix ?? `cursor-${randomUUID().slice(0, 8)}`;
  }

  /** Feeds one stdout line (without its newline). */
  feed(text: string): ProviderEvent[] {
    return this.#lines.feed(text, classifyCursorStreamLine, (classified, events) => this.#read(classified, events));
  }

  #read(classified: CursorStreamLine, events: ProviderEvent[]): void {
    switch (classified.kind) {
      case "system-init":
        this.#sessionStarted(classified.line.session_id, events);
        break;
      case "assistant":
        this.#assistant(classified.line, events);
        break;
      case "tool-call":
        this.#toolCall(classified.line, events);
        break;
      case "result":
        this.#resultLine(classified.line, events);
        break;
      case "error":
        this.#errorMessage ??= classified.message;
        if (isCursorLoginRequiredText(classified.message)) this.#notAuthenticatedText ??= classified.message;
        break;
    }
  }

  /** Notes a stdout line that was too long to keep; it still counts as output. */
  lineDropped(): ProviderEvent[] {
    return this.#lines.lineDropped();
  }

  /** Ends the run: completes a message still open. */
  finish(): ProviderEvent[] {
    const events: ProviderEvent[] = [];
    this.#completeCurrent(events);
    return events;
  }

  summary(): CursorStreamSummary {
    return {
      providerSessionId: this.#providerSessionId,
      result: this.#result,
      errorMessage: this.#errorMessage,
      notAuthenticatedText: this.#notAuthenticatedText,
      ...this.#lines.counts(),
      unknownLineCount: this.#lines.unknownLineCount,
    };
  }

  #sessionStarted(providerSessionId: string, events: ProviderEvent[]): void {
    if (providerSessionId === this.#providerSessionId) return;
    this.#providerSessionId = providerSessionId;
    events.push({ type: "provider-session-started", providerSessionId });
  }

  /** Every line repeats the chat id; the init line's is the one kept, the others only stand in when it was lost. */
  #sessionSeen(providerSessionId: string | undefined, events: ProviderEvent[]): void {
    if (providerSessionId !== undefined && this.#providerSessionId === null) this.#sessionStarted(providerSessionId, events);
  }

  #assistant(line: CursorAssistantLine, events: ProviderEvent[]): void {
    this.#sessionSeen(line.session_id, events);
    const text = line.message.content.map((part) => (part.type === "text" ? (part.text ?? "") : "")).join("");
    if (text === "") return;
    const isChunk = line.timestamp_ms !== undefined && line.model_call_id === undefined;
    if (isChunk) {
      this.#current ??= { id: this.#newMessageId(), text: "" };
      this.#current.text += text;
      events.push({ type: "text-delta", messageId: this.#current.id, delta: text });
      return;
    }
    this.#wholeText(text, events);
  }

  /** A line carrying a whole message (or the whole response) rather than a chunk of one. */
  #wholeText(text: string, events: ProviderEvent[]): void {
    const current = this.#current;
    if (current !== null) {
      // A late repeat of an earlier message: the message being streamed goes on.
      if (squeezed(text) !== squeezed(current.text) && this.#repeatsCompleted(text)) return;
      let rest = this.#restAfterSent(text, [...this.#completedTexts, current.text]);
      if (rest !== null) {
        // Whitespace the chunks already ended with is not sent twice.
        const sentTail = /\s*$/.exec(current.text)?.[0] ?? "";
        if (sentTail !== "" && rest.startsWith(sentTail)) rest = rest.slice(sentTail.length);
        // The chunks so far, plus what they missed.
        if (rest !== "") events.push({ type: "text-delta", messageId: current.id, delta: rest });
        current.text += rest;
        this.#completeCurrent(events);
        return;
      }
      this.#completeCurrent(events);
    }
    if (this.#repeatsCompleted(text)) return;
    const unsent = (this.#restAfterSent(text, this.#completedTexts) ?? text).trimStart();
    // Text that never came in chunks (no partial output, or lost lines): one delta and its completion.
    const messageId = this.#newMessageId();
    events.push({ type: "text-delta", messageId, delta: unsent });
    this.#completedTexts.push(unsent);
    events.push({ type: "message-completed", messageId, text: unsent });
  }

  /** True when `text` adds nothing to the messages completed so far: one of them again, or the last few together. */
  #repeatsCompleted(text: string): boolean {
    const wanted = squeezed(text);
    if (wanted === "" || this.#completedTexts.some((sent) => squeezed(sent) === wanted)) return true;
    return this.#restAfterSent(text, this.#completedTexts)?.trim() === "";
  }

  /**
   * When `text` starts with texts already sent in this run (the last one, or the last few together, as in the whole
   * response so far), whatever separates them: the part after them, not sent yet ("" if none). Null otherwise.
   */
  #restAfterSent(text: string, sent: readonly string[]): string | null {
    for (let start = 0; start < sent.length; start += 1) {
      const end = endOfPrefix(text, squeezed(sent.slice(start).join("")));
      if (end !== -1) return text.slice(end);
    }
    return null;
  }

  #toolCall(line: CursorToolCallLine, events: ProviderEvent[]): void {
    this.#sessionSeen(line.session_id, events);
    // The agent acts on what it said; its message is complete.
    this.#completeCurrent(events);
    const [key, call] = Object.entries(line.tool_call)[0] ?? [];
    if (key === undefined || call === undefined) return;
    const id = line.call_id;
    if (line.subtype === "started") {
      const { kind, title } = describeCursorToolCall(key, call.args);
      this.#openActivities.set(id, { kind, title });
      events.push({ type: "activity", activity: { id, kind, status: "started", title } });
      return;
    }
    if (line.subtype !== "completed") return;
    const opened = this.#openActivities.get(id) ?? describeCursorToolCall(key, call.args);
    this.#openActivities.delete(id);
    const { failed, detail } = cursorToolOutcome(call.result);
    const activity: Activity = { id, kind: opened.kind, status: failed ? "failed" : "completed", title: opened.title };
    if (detail !== undefined) activity.detail = detail;
    events.push({ type: "activity", activity });
  }

  #resultLine(line: CursorResultLine, events: ProviderEvent[]): void {
    this.#completeCurrent(events);
    this.#sessionSeen(line.session_id, events);
    const text = line.result ?? "";
    if (line.is_error === true || line.subtype !== "success") {
      const message = text.trim() || `cursor-agent reported ${line.subtype}`;
      if (isCursorLoginRequiredText(message)) this.#notAuthenticatedText ??= message;
      this.#result = { ok: false, subtype: line.subtype, message };
      return;
    }
    this.#result = { ok: true, text };
    // The final answer is also in the result; show it when no assistant line carried it.
    if (this.#completedTexts.length === 0 && text.trim() !== "") this.#wholeText(text, events);
  }

  #completeCurrent(events: ProviderEvent[]): void {
    const current = this.#current;
    if (current === null) return;
    this.#current = null;
    this.#completedTexts.push(current.text);
    events.push({ type: "message-completed", messageId: current.id, text: current.text });
  }

  #newMessageId(): string {
    this.#messageCounter += 1;
    return `${this.#messageIdPrefix}-${this.#messageCounter}`;
  }
}
