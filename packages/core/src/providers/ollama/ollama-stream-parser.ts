import { agentEventSchema, type AgentEvent } from "@pedelec/protocol/agent-wire";
import type { WireError } from "@pedelec/protocol/pedelec-error";
import type { CliStreamParser } from "../cli-runner.js";
import type { ProviderEvent } from "../provider-adapter.js";
import { StreamBookkeeping, type StreamLineCounts } from "../stream-bookkeeping.js";
import { checkStreamLine, readStreamLine, type InvalidStreamLine, type NotJsonStreamLine } from "../stream-line.js";

/** What the parser learned from a whole run of `pedelec-agent`. */
export interface OllamaStreamSummary extends StreamLineCounts {
  conversationId: string | null;
  completed: boolean;
  failure: { error: WireError; conversationLost: boolean } | null;
}

type AgentLine = { kind: "event"; event: AgentEvent } | NotJsonStreamLine | InvalidStreamLine;

/** Our own agent speaks only `agentEventSchema`: any other line is invalid, not a newer CLI's extra. */
function classifyAgentLine(text: string): AgentLine {
  const read = readStreamLine(text, "type");
  if (read === null) return { kind: "not-json" };
  return checkStreamLine(read, agentEventSchema, (event) => ({ kind: "event" as const, event }));
}

/** Turns `pedelec-agent`'s JSON lines into normalized provider events. One parser per run. */
export class OllamaStreamParser implements CliStreamParser<OllamaStreamSummary> {
  readonly #lines = new StreamBookkeeping("ollama");
  #conversationId: string | null = null;
  #completed = false;
  #failure: OllamaStreamSummary["failure"] = null;

  feed(text: string): ProviderEvent[] {
    return this.#lines.feed(text, classifyAgentLine, (line, events) => {
      if (line.kind === "event") this.#read(line.event, events);
    });
  }

  #read(event: AgentEvent, events: ProviderEvent[]): void {
    switch (event.type) {
      case "conversation-started":
        this.#conversationId = event.conversationId;
        events.push({ type: "provider-session-started", providerSessionId: event.conversationId });
        return;
      case "text-delta":
        events.push({ type: "text-delta", messageId: event.messageId, delta: event.delta });
        return;
      case "message-completed":
        events.push({ type: "message-completed", messageId: event.messageId, text: event.text });
        return;
      case "activity":
        events.push({ type: "activity", activity: event.activity });
        return;
      case "turn-completed":
        this.#completed = true;
        return;
      case "turn-failed":
        this.#failure ??= { error: event.error, conversationLost: event.conversationLost ?? false };
        return;
    }
  }

  lineDropped(): ProviderEvent[] {
    return this.#lines.lineDropped();
  }

  finish(): ProviderEvent[] {
    return [];
  }

  summary(): OllamaStreamSummary {
    return { ...this.#lines.counts(), conversationId: this.#conversationId, completed: this.#completed, failure: this.#failure };
  }
}
