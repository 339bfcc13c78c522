import type { TokenUsage } from "@pedelec/protocol/token-usage";
import type { CliStreamParser } from "../cli-runner.js";
import { isCredentialRefusalStatus } from "../model-service-status.js";
import type { ProviderEvent } from "../provider-adapter.js";
import { scrubbedWithin, scrubSecrets } from "../provider-text-scrubber.js";
import { StreamBookkeeping, type StreamLineCounts } from "../stream-bookkeeping.js";
import {
  classifyOpencodeStreamLine,
  type OpencodeDoneLine,
  type OpencodeErrorLine,
  type OpencodeStepTokens,
  type OpencodeStreamLine,
  type OpencodeTextLine,
  type OpencodeToolUseLine,
} from "./opencode-stream-schema.js";
import { describeOpencodeToolUse } from "./opencode-tool-activity.js";

export const OPENCODE_ACTIVITY_DETAIL_MAX_BYTES = 4 * 1024;

/** Error names (OpenCode's session errors) that mean the model provider refused the credentials. */
const AUTH_ERROR_NAMES = new Set(["ProviderAuthError"]);

/** An error line, reduced to what the adapter reports. */
export interface OpencodeReportedError {
  name: string | null;
  message: string;
  statusCode: number | null;
  /** OpenCode's `isRetryable`: true for a failure it retried (429, 5xx, no connection), null when not said. */
  retryable: boolean | null;
}

/** What the parser learned from a whole run, read once stdout is drained. */
export interface OpencodeStreamSummary extends StreamLineCounts {
  providerSessionId: string | null;
  /** The `done` line, when one came (newer CLIs print it when the session goes idle). */
  done: { reason: string; rejected: string[] } | null;
  /** Reason of the last `step_finish`; "tool-calls" means the model meant to go on. */
  lastStepFinishReason: string | null;
  /** The first `error` line. */
  error: OpencodeReportedError | null;
  /** The model provider's refusal of missing or invalid credentials, when the run showed it. */
  notAuthenticatedText: string | null;
  /** JSON lines of types the adapter does not read (reasoning, …). */
  unknownLineCount: number;
  /** The turn's tokens, added up over its steps; null when no step reported any. */
  usage: TokenUsage | null;
}

/**
 * Turns OpenCode's `run --format json` events, one stdout line at a time, into normalized provider events. OpenCode
 * prints a text part only once it is finished and a tool call only once it has ended, so there are no text deltas and
 * each tool call gives its started and its end activity together. It retries failed model requests without printing
 * anything, so there is no retry to show, and a refused key (401) ends its run by itself. One parser per run.
 */
export class OpencodeStreamParser implements CliStreamParser<OpencodeStreamSummary> {
  #providerSessionId: string | null = null;
  #done: OpencodeStreamSummary["done"] = null;
  #lastStepFinishReason: string | null = null;
  #error: OpencodeReportedError | null = null;
  #notAuthenticatedText: string | null = null;
  #usage: TokenUsage | null = null;
  readonly #lines = new StreamBookkeeping("opencode");
  /** Completed text per part id, so a part printed again unchanged is not a second message. */
  readonly #completedTexts = new Map<string, string>();
  /** Tool calls already reported, by activity id. */
  readonly #reportedTools = new Set<string>();

  /** Feeds one stdout line (without its newline). */
  feed(text: string): ProviderEvent[] {
    return this.#lines.feed(text, classifyOpencodeStreamLine, (classified, events) => this.#read(classified, events));
  }

  #read(classified: OpencodeStreamLine, events: ProviderEvent[]): void {
    switch (classified.kind) {
      case "step-start":
        this.#sessionSeen(classified.line.sessionID, events);
        break;
      case "text":
        this.#sessionSeen(classified.line.sessionID, events);
        this.#text(classified.line, events);
        break;
      case "tool-use":
        this.#sessionSeen(classified.line.sessionID, events);
        this.#toolUse(classified.line, events);
        break;
      case "step-finish":
        this.#sessionSeen(classified.line.sessionID, events);
        this.#lastStepFinishReason = classified.line.part.reason ?? null;
        this.#stepTokens(classified.line.part.tokens, events);
        break;
      case "error":
        if (classified.line.sessionID !== undefined) this.#sessionSeen(classified.line.sessionID, events);
        this.#errorLine(classified.line);
        break;
      case "done":
        this.#sessionSeen(classified.line.sessionID, events);
        this.#doneLine(classified.line);
        break;
      case "unknown":
        // A line of a type not read still names the run's session.
        if (classified.sessionID !== null) this.#sessionSeen(classified.sessionID, events);
        break;
    }
  }

  /** Notes a stdout line that was too long to keep; it still counts as output. */
  lineDropped(): ProviderEvent[] {
    return this.#lines.lineDropped();
  }

  /** Every message and tool call is complete when it is printed: nothing is left open at the end. */
  finish(): ProviderEvent[] {
    return [];
  }

  summary(): OpencodeStreamSummary {
    return {
      providerSessionId: this.#providerSessionId,
      done: this.#done,
      lastStepFinishReason: this.#lastStepFinishReason,
      error: this.#error,
      notAuthenticatedText: this.#notAuthenticatedText,
      ...this.#lines.counts(),
      unknownLineCount: this.#lines.unknownLineCount,
      usage: this.#usage,
    };
  }

  /**
   * Each step is one model request and reports its own tokens, so the turn's are their sum. OpenCode takes the cache
   * reads and writes out of `input` and the reasoning out of `output`; they are put back, since the model read and
   * wrote them all, and the cache reads are also `cachedInputTokens`. `total` is the provider's own total.
   */
  #stepTokens(tokens: OpencodeStepTokens | undefined, events: ProviderEvent[]): void {
    if (tokens === undefined) return;
    const input = [tokens.input, tokens.cache?.read, tokens.cache?.write];
    const output = [tokens.output, tokens.reasoning];
    const step: TokenUsage = {};
    if (input.some((count) => count !== undefined)) step.inputTokens = sum(input);
    if (output.some((count) => count !== undefined)) step.outputTokens = sum(output);
    if (tokens.cache?.read !== undefined) step.cachedInputTokens = tokens.cache.read;
    if (tokens.total !== undefined) step.totalTokens = tokens.total;
    else if (step.inputTokens !== undefined || step.outputTokens !== undefined) step.totalTokens = (step.inputTokens ?? 0) + (step.outputTokens ?? 0);
    if (Object.keys(step).length === 0) return;
    const turn: TokenUsage = { ...this.#usage };
    for (const field of ["inputTokens", "outputTokens", "cachedInputTokens", "totalTokens"] as const) {
      const count = step[field];
      if (count !== undefined) turn[field] = (turn[field] ?? 0) + count;
    }
    this.#usage = turn;
    events.push({ type: "usage", usage: turn });
  }

  /** Every line names the run's session; the first one is the conversation to resume later. */
  #sessionSeen(providerSessionId: string, events: ProviderEvent[]): void {
    if (this.#providerSessionId !== null) return;
    this.#providerSessionId = providerSessionId;
    events.push({ type: "provider-session-started", providerSessionId });
  }

  #text(line: OpencodeTextLine, events: ProviderEvent[]): void {
    const { id, text } = line.part;
    if (text.trim() === "" || this.#completedTexts.get(id) === text) return;
    this.#completedTexts.set(id, text);
    events.push({ type: "message-completed", messageId: id, text });
  }

  #toolUse(line: OpencodeToolUseLine, events: ProviderEvent[]): void {
    const { part } = line;
    const id = part.callID ?? part.id;
    if (this.#reportedTools.has(id)) return;
    this.#reportedTools.add(id);
    const state = part.state;
    const described = describeOpencodeToolUse(part.tool, state.input, state.status === "completed" ? state.title : undefined);
    const kind = described.kind;
    const title = scrubSecrets(described.title);
    events.push({ type: "activity", activity: { id, kind, status: "started", title } });
    if (state.status === "error") {
      const detail = scrubbedWithin(state.error, OPENCODE_ACTIVITY_DETAIL_MAX_BYTES, scrubSecrets);
      events.push({ type: "activity", activity: { id, kind, status: "failed", title, detail } });
      return;
    }
    // The bash tool finishes "completed" whatever the command's exit code; the code is in its metadata.
    const exit = state.metadata?.exit;
    const failed = typeof exit === "number" && exit !== 0;
    const detail = scrubbedWithin(state.output, OPENCODE_ACTIVITY_DETAIL_MAX_BYTES, scrubSecrets);
    events.push({ type: "activity", activity: { id, kind, status: failed ? "failed" : "completed", title, detail } });
  }

  #errorLine(line: OpencodeErrorLine): void {
    const error = line.error;
    const reported: OpencodeReportedError =
      typeof error === "string"
        ? { name: null, message: error, statusCode: null, retryable: null }
        : {
            name: error.name ?? null,
            message: error.data?.message ?? error.message ?? error.name ?? "opencode reported an error",
            statusCode: error.data?.statusCode ?? null,
            retryable: error.data?.isRetryable ?? null,
          };
    this.#error ??= reported;
    const signedOut = (reported.name !== null && AUTH_ERROR_NAMES.has(reported.name)) || isCredentialRefusalStatus(reported.statusCode);
    if (signedOut) this.#notAuthenticatedText ??= reported.message;
  }

  #doneLine(line: OpencodeDoneLine): void {
    this.#done = { reason: line.reason, rejected: line.rejected ?? [] };
  }
}

function sum(counts: readonly (number | undefined)[]): number {
  return counts.reduce<number>((total, count) => total + (count ?? 0), 0);
}
