import { expect } from "vitest";
import type { PedelecError } from "@pedelec/protocol/pedelec-error";
import { buildFirstPrompt } from "../first-prompt.js";
import type { ProviderAdapter, ProviderEvent, ProviderTurnOutcome, ProviderTurnRequest, SessionToolServer } from "../providers/provider-adapter.js";

/** The session MCP server a turn request names in adapter tests, where no CLI starts it. */
export const TEST_TOOL_SERVER: SessionToolServer = {
  command: "/home/user/.pedelec/bin/pedelec-cli",
  args: ["mcp"],
  envNames: ["PEDELEC_HOME", "PEDELEC_THREAD_ID", "PEDELEC_THREAD_CAPABILITY"],
};

/** What differs between one adapter test's turns: the CLI, its folder and environment, and the effort flags. */
export interface StandInTurnBase {
  executablePath: string;
  workspacePath: string;
  effortArgv: string[];
  env: Record<string, string>;
  toolServer?: SessionToolServer;
}

export type TurnOverrides = Partial<ProviderTurnRequest> & { prompt: string };

/** A sandboxed first turn of a new session, with the default model, unless the overrides say otherwise. */
export function standInTurnRequest(base: StandInTurnBase, overrides: TurnOverrides): ProviderTurnRequest {
  return {
    providerSessionId: null,
    access: "sandbox",
    model: null,
    signal: new AbortController().signal,
    toolServer: TEST_TOOL_SERVER,
    ...base,
    ...overrides,
  };
}

/** Runs one turn to its end, keeping every event the adapter emitted. */
export async function runTurn(adapter: ProviderAdapter, request: ProviderTurnRequest) {
  const events: ProviderEvent[] = [];
  const outcome = await adapter.runTurn(request, (event) => events.push(event));
  return { outcome, events };
}

/** The provider session id the turn announced; the turn must announce exactly one. */
export function sessionIdOf(events: ProviderEvent[]): string | null {
  const started = events.flatMap((event) => (event.type === "provider-session-started" ? [event.providerSessionId] : []));
  expect(started).toHaveLength(1);
  return started[0] ?? null;
}

/** The completed messages, and for each the concatenation of its deltas. */
export function messages(events: ProviderEvent[]) {
  return events.flatMap((event) =>
    event.type === "message-completed"
      ? [
          {
            text: event.text,
            deltas: events.flatMap((other) => (other.type === "text-delta" && other.messageId === event.messageId ? [other.delta] : [])).join(""),
          },
        ]
      : [],
  );
}

/** The text of each completed message. */
export function texts(events: ProviderEvent[]): string[] {
  return events.flatMap((event) => (event.type === "message-completed" ? [event.text] : []));
}

/** The error of a turn that has to have failed. */
export function errorOf(outcome: ProviderTurnOutcome): PedelecError {
  if (outcome.ok) throw new Error("expected a failed turn");
  return outcome.error;
}

/** The thread the adapter tests' turns belong to. */
export const THREAD_ID = "thread-7f3a91c2";

/** The prompt Core sends on a thread's first turn, ending with the user's text. */
export function firstPrompt(userText: string): string {
  return buildFirstPrompt({ threadId: THREAD_ID, guidance: "", tools: [], userText });
}
