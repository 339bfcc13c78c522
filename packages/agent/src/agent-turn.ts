import { randomUUID } from "node:crypto";
import { resolve } from "node:path";
import type { AgentEvent } from "@pedelec/protocol/agent-wire";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { truncateUtf8 } from "@pedelec/core/providers/truncate-utf8";
import type { AgentOptions } from "./agent-options.js";
import { AgentToolbox, BUILT_IN_TOOL_NAMES } from "./agent-tools.js";
import type { CoreBridge } from "./core-bridge.js";
import { ConversationStore, newConversation, type ConversationRecord } from "./conversation-store.js";
import type { OllamaChatRequest } from "./ollama-chat-schema.js";
import { streamChatRound } from "./ollama-client.js";
import { buildSystemPrompt } from "./system-prompt.js";

/** Longest activity detail the agent reports. */
export const MAX_ACTIVITY_DETAIL_BYTES = 2 * 1024;

export interface AgentTurnInput {
  options: AgentOptions;
  prompt: string;
  apiKey: string;
  pedelecHome: string;
  bridge: CoreBridge | null;
  idleTimeoutMs?: number;
  emit(event: AgentEvent): void;
  /** Diagnostics for stderr. */
  note(text: string): void;
}

/** A turn that failed; `conversationLost` when the conversation it was to continue is gone. */
export class TurnFailure extends Error {
  constructor(
    readonly error: PedelecError,
    readonly conversationLost = false,
  ) {
    super(error.message);
    this.name = "TurnFailure";
  }
}

/**
 * One turn: loads or starts the conversation, then asks the model round after round, streaming its text and running
 * the tools it calls, until it answers without a tool call. The conversation is saved after every round.
 */
export async function runAgentTurn(input: AgentTurnInput): Promise<void> {
  const { options, emit } = input;
  const store = new ConversationStore(input.pedelecHome);
  const workspace = resolve(options.workspace);
  const conversation = await openConversation(store, options, workspace);

  const toolbox = await AgentToolbox.create(workspace, input.bridge, input.note);
  const tools = toolbox.definitions();
  const pageToolNames = tools.map((tool) => tool.function.name).filter((name) => !BUILT_IN_TOOL_NAMES.includes(name));
  conversation.record.messages[0] = { role: "system", content: buildSystemPrompt(pageToolNames) };
  conversation.record.model = options.model;
  emit({ type: "conversation-started", conversationId: conversation.record.conversationId, resumed: conversation.resumed });

  const messages = conversation.record.messages;
  messages.push({ role: "user", content: input.prompt });
  await store.save(conversation.record);

  const usage = { promptTokens: 0, outputTokens: 0 };
  for (let round = 1; ; round += 1) {
    const request: OllamaChatRequest = { model: options.model, messages, tools, stream: true };
    const modelOptions = {
      ...(options.numCtx !== undefined ? { num_ctx: options.numCtx } : {}),
      ...(options.temperature !== undefined ? { temperature: options.temperature } : {}),
    };
    if (Object.keys(modelOptions).length > 0) request.options = modelOptions;
    if (options.think !== undefined) request.think = options.think;

    const messageId = `message-${randomUUID()}`;
    const answer = await streamChatRound({
      baseUrl: options.baseUrl,
      apiKey: input.apiKey,
      request,
      ...(input.idleTimeoutMs !== undefined ? { idleTimeoutMs: input.idleTimeoutMs } : {}),
      onContent: (delta) => emit({ type: "text-delta", messageId, delta }),
    });
    usage.promptTokens += answer.promptTokens;
    usage.outputTokens += answer.outputTokens;
    if (answer.content !== "") emit({ type: "message-completed", messageId, text: answer.content });
    if (answer.doneReason === "length") input.note(`round ${round}: the model stopped at its length limit`);

    if (answer.toolCalls.length === 0) {
      messages.push({ role: "assistant", content: answer.content });
      await store.save(conversation.record);
      emit({ type: "turn-completed", rounds: round, usage });
      return;
    }

    messages.push({ role: "assistant", content: answer.content, tool_calls: answer.toolCalls });
    for (const [index, call] of answer.toolCalls.entries()) {
      const { name, arguments: args } = call.function;
      const description = toolbox.describe(name, args);
      const activity = { id: `tool-${round}-${index + 1}`, kind: description.kind, title: description.title };
      emit({ type: "activity", activity: { ...activity, status: "started", detail: capDetail(JSON.stringify(args)) } });
      const outcome = await toolbox.execute(name, args);
      const failed = !outcome.ok || isFailedRun(outcome.result);
      emit({
        type: "activity",
        activity: { ...activity, status: failed ? "failed" : "completed", detail: capDetail(outcome.ok ? JSON.stringify(outcome.result) : `${outcome.error.code}: ${outcome.error.message}`) },
      });
      messages.push({ role: "tool", tool_name: name, content: JSON.stringify(outcome) });
    }
    await store.save(conversation.record);
    if (round >= options.maxToolRounds) {
      throw new TurnFailure(
        new PedelecError("AGENT_TOOL_ROUNDS_EXCEEDED", `the model was still calling tools after ${options.maxToolRounds} rounds; the turn was stopped`),
      );
    }
  }
}

async function openConversation(store: ConversationStore, options: AgentOptions, workspace: string) {
  if (options.conversationId === undefined) {
    return { record: newConversation(options.model, workspace, ""), resumed: false };
  }
  let record: ConversationRecord;
  try {
    record = await store.load(options.conversationId);
  } catch (error) {
    throw new TurnFailure(PedelecError.from(error, "THREAD_NOT_FOUND"), true);
  }
  if (record.workspace !== workspace) {
    throw new TurnFailure(new PedelecError("INVALID_INPUT", `the conversation ${options.conversationId} belongs to another workspace`));
  }
  return { record, resumed: true };
}

/** A script run that did not end with exit code 0 shows as a failed activity, though the model still gets its output. */
function isFailedRun(result: unknown): boolean {
  if (typeof result !== "object" || result === null || !("termination" in result)) return false;
  const run = result as { termination: unknown; exitCode: unknown };
  return run.termination !== "exited" || run.exitCode !== 0;
}

function capDetail(text: string): string {
  return truncateUtf8(text, MAX_ACTIVITY_DETAIL_BYTES).text;
}
