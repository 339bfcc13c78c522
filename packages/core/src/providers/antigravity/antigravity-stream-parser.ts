import { randomUUID } from "node:crypto";
import type { Activity } from "@pedelec/protocol/session-events";
import type { CliStreamParser } from "../cli-runner.js";
import type { ProviderEvent } from "../provider-adapter.js";
import { StreamBookkeeping, type StreamLineCounts } from "../stream-bookkeeping.js";
import { truncateUtf8 } from "../truncate-utf8.js";
import { antigravityLoginLine, isAntigravityLoginRequiredText } from "./antigravity-login-text.js";
import {
  antigravityErrorText,
  classifyAntigravityStreamLine,
  type AntigravityResultLine,
  type AntigravityStep,
  type AntigravityStreamLine,
} from "./antigravity-stream-schema.js";
import { describeAntigravityTool } from "./antigravity-tool-activity.js";

export const ACTIVITY_DETAIL_MAX_BYTES = 4 * 1024;

/** How the run's terminal `result` line ended the turn. */
export type AntigravityTurnResult = { ok: true; text: string } | { ok: false; status: string; message: string };

/** What the parser learned from a whole run, read once stdout is drained. */
export interface AntigravityStreamSummary extends StreamLineCounts {
  providerSessionId: string | null;
  /** Null when no valid `result` line came. */
  result: AntigravityTurnResult | null;
  /** The CLI's own sign-in request, when stdout showed one. */
  notAuthenticatedText: string | null;
  /** JSON lines of an event the adapter does not read. */
  unknownEventCount: number;
}

export interface AntigravityStreamParserOptions {
  /** Prefix of message and activity ids. Random by default, so ids differ between runs. */
  idPrefix?: string;
}

interface OpenMessage {
  id: string;
  /** The step that streams it, when the CLI numbers its steps. */
  stepIndex: number | undefined;
  text: string;
}

interface OpenActivity {
  id: string;
  toolName: string;
  stepIndex: number | undefined;
  kind: Activity["kind"];
  title: string;
}

/**
 * Turns the Antigravity CLI's stream-json, one stdout line at a time, into normalized provider events: `init`
 * gives the conversation id, `agent_response` steps stream text deltas, `tool` steps are activities, and the
 * terminal `result` says how the turn ended. One parser per run.
 */
export class AntigravityStreamParser implements CliStreamParser<AntigravityStreamSummary> {
  readonly #idPrefix: string;
  #counter = 0;
  #providerSessionId: string | null = null;
  #result: AntigravityTurnResult | null = null;
  #notAuthenticatedText: string | null = null;
  readonly #lines = new StreamBookkeeping("antigravity");
  #message: OpenMessage | null = null;
  #completedAnyText = false;
  readonly #activities: OpenActivity[] = [];

  constructor(options: AntigravityStreamParserOptions = {}) {
    this.#idPrefix = options.idPrefix ?? `agy-${randomUUID().slice(0, 8)}`;
  }

  /** Feeds one stdout line (without its newline). */
  feed(text: string): ProviderEvent[] {
    return this.#lines.feed(text, classifyAntigravityStreamLine, (classified, events) => this.#read(classified, text, events));
  }

  #read(classified: AntigravityStreamLine, text: string, events: ProviderEvent[]): void {
    switch (classified.kind) {
      case "init":
        this.#sessionStarted(classified.line.conversation_id, events);
        break;
      case "step":
        this.#step(classified.step, events);
        break;
      case "result":
        this.#resultLine(classified.line, events);
        break;
      case "not-json":
        // The CLI prints its sign-in request as plain text.
        this.#notAuthenticatedText ??= antigravityLoginLine(text);
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
    this.#completeMessage(events);
    return events;
  }

  summary(): AntigravityStreamSummary {
    return {
      providerSessionId: this.#providerSessionId,
      result: this.#result,
      notAuthenticatedText: this.#notAuthenticatedText,
      ...this.#lines.counts(),
      unknownEventCount: this.#lines.unknownLineCount,
    };
  }

  #sessionStarted(providerSessionId: string, events: ProviderEvent[]): void {
    if (providerSessionId === this.#providerSessionId) return;
    this.#providerSessionId = providerSessionId;
    events.push({ type: "provider-session-started", providerSessionId });
  }

  #step(step: AntigravityStep, events: ProviderEvent[]): void {
    if (step.conversation_id && this.#providerSessionId === null) this.#sessionStarted(step.conversation_id, events);
    const stepType = step.step_type ?? this.#typeOfOpenStep(step.step_index);
    if (stepType === "agent_response") this.#responseStep(step, events);
    else if (stepType === "tool") this.#toolStep(step, events);
    // user_input (the CLI echoing the prompt), system_message, checkpoint, …: not the agent's words or actions.
  }

  /** A closing update may name only its step; it continues whichever open step has that index. */
  #typeOfOpenStep(stepIndex: number | undefined): string | undefined {
    if (stepIndex === undefined) return undefined;
    if (this.#message?.stepIndex === stepIndex) return "agent_response";
    if (this.#activities.some((activity) => activity.stepIndex === stepIndex)) return "tool";
    return undefined;
  }

  #responseStep(step: AntigravityStep, events: ProviderEvent[]): void {
    const delta = step.text_delta ?? "";
    if (
      this.#message !== null &&
      step.step_index !== undefined &&
      this.#message.stepIndex !== undefined &&
      this.#message.stepIndex !== step.step_index
    ) {
      this.#completeMessage(events);
    }
    // Some builds repeat the whole text in the step's closing update; it is not new text.
    const repeated = step.state === "DONE" && this.#message !== null && this.#message.text !== "" && delta === this.#message.text;
    if (delta !== "" && !repeated) {
      this.#message ??= { id: this.#newId("message"), stepIndex: step.step_index, text: "" };
      this.#message.text += delta;
      events.push({ type: "text-delta", messageId: this.#message.id, delta });
    }
    if (step.state === "DONE" || step.state === "ERROR") this.#completeMessage(events);
  }

  #toolStep(step: AntigravityStep, events: ProviderEvent[]): void {
    // The agent acts on what it said; its message is complete.
    this.#completeMessage(events);
    const toolName = step.tool_name ?? step.tool_info?.name ?? "tool";
    let open = this.#openActivity(step.step_index, toolName);
    if (open === undefined) {
      const { kind, title } = describeAntigravityTool(toolName, step.tool_info?.parameters);
      const id = step.step_index === undefined ? this.#newId("tool") : `${this.#idPrefix}-step-${step.step_index}`;
      open = { id, toolName, stepIndex: step.step_index, kind, title };
      this.#activities.push(open);
      events.push({ type: "activity", activity: { id, kind, status: "started", title } });
    }
    if (step.state !== "DONE" && step.state !== "ERROR") return;
    this.#activities.splice(this.#activities.indexOf(open), 1);
    const failed = step.state === "ERROR";
    const detail = failed ? antigravityErrorText(step.error) || step.output || "" : (step.output ?? "");
    events.push({
      type: "activity",
      activity: {
        id: open.id,
        kind: open.kind,
        status: failed ? "failed" : "completed",
        title: open.title,
        detail: truncateUtf8(detail, ACTIVITY_DETAIL_MAX_BYTES).text,
      },
    });
  }

  /** The started activity an update belongs to: by step index, or (unnumbered) the latest of that tool. */
  #openActivity(stepIndex: number | undefined, toolName: string): OpenActivity | undefined {
    if (stepIndex !== undefined) return this.#activities.find((activity) => activity.stepIndex === stepIndex);
    return this.#activities.findLast((activity) => activity.stepIndex === undefined && activity.toolName === toolName);
  }

  #resultLine(line: AntigravityResultLine, events: ProviderEvent[]): void {
    this.#completeMessage(events);
    const { status, conversation_id: conversationId, response } = line.result;
    if (conversationId) this.#sessionStarted(conversationId, events);
    const text = response ?? "";
    if (status !== "SUCCESS") {
      const message = antigravityErrorText(line.result.error).trim() || text.trim() || `agy ended with status ${status}`;
      if (isAntigravityLoginRequiredText(message)) this.#notAuthenticatedText ??= message;
      this.#result = { ok: false, status, message };
      return;
    }
    this.#result = { ok: true, text };
    // The final answer is also in the result; show it when no step streamed it.
    if (!this.#completedAnyText && text.trim() !== "") {
      const messageId = this.#newId("message");
      events.push({ type: "text-delta", messageId, delta: text });
      events.push({ type: "message-completed", messageId, text });
      this.#completedAnyText = true;
    }
  }

  #completeMessage(events: ProviderEvent[]): void {
    const message = this.#message;
    if (message === null) return;
    this.#message = null;
    this.#completedAnyText = true;
    events.push({ type: "message-completed", messageId: message.id, text: message.text });
  }

  #newId(kind: string): string {
    this.#counter += 1;
    return `${this.#idPrefix}-${kind}-${this.#counter}`;
  }
}
