import { randomUUID } from "node:crypto";
import { resolve } from "node:path";
import type { AgentEvent } from "@pedelec/protocol/agent-wire";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { truncateUtf8 } from "@pedelec/core/providers/truncate-utf8";
import type { AgentOptions } from "./agent-options.js";
import { AgentToolbox, BUILT_IN_TOOL_NAMES, isPlainObject } from "./agent-tools.js";
import type { ThreadBridge } from "@pedelec/core-client/thread-bridge";
import { ConversationStore, newConversation, type ConversationRecord } from "./conversation-store.js";
import type { OllamaChatRequest } from "./ollama-chat-schema.js";
import { streamChatRound } from "./ollama-client.js";
import { buildSystemPrompt } from "./system-prompt.js";
import { TurnEventPacer } from "./turn-event-pacer.js";
import {
  DEFAULT_MAX_TURN_MS,
  MAX_REFUSED_CALLS_ANSWERED,
  MAX_TOOL_CALLS_PER_ANSWER,
  MAX_TOOL_CALLS_PER_TURN,
  TurnBudget,
  turnDeadline,
} from "./turn-limits.js";

/** Longest activity detail the agent reports. */
export const MAX_ACTIVITY_DETAIL_BYTES = 2 * 1024;

export interface AgentTurnInput {
  options: AgentOptions;
  prompt: string;
  apiKey: string;
  pedelecHome: string;
  bridge: ThreadBridge | null;
  idleTimeoutMs?: number;
  /** How long the turn may take (DEFAULT_MAX_TURN_MS). */
  maxTurnMs?: number;
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
 * the tools it calls, until it answers without a tool call. The conversation is saved (and kept under its size cap)
 * after every round. Every bound of turn-limits.ts applies: calls per answer and per turn, bytes written, the answers'
 * bytes and text, the turn's duration, and the events sent (joined by TurnEventPacer).
 */
export async function runAgentTurn(input: AgentTurnInput): Promise<void> {
  const pacer = new TurnEventPacer(input.emit);
  const deadline = turnDeadline(input.maxTurnMs ?? DEFAULT_MAX_TURN_MS);
  try {
    await runRounds(input, (event) => pacer.send(event), deadline.signal);
  } catch (error) {
    // The deadline may surface as whatever it interrupted (a page tool's wait, a script run): say what it was.
    if (deadline.signal.aborted && deadline.signal.reason instanceof PedelecError && !(error instanceof TurnFailure)) {
      throw new TurnFailure(deadline.signal.reason);
    }
    throw error;
  } finally {
    pacer.flush();
    deadline.clear();
  }
}

async function runRounds(input: AgentTurnInput, emit: (event: AgentEvent) => void, signal: AbortSignal): Promise<void> {
  const { options } = input;
  const store = new ConversationStore(input.pedelecHome);
  const workspace = resolve(options.workspace);
  const conversation = await openConversation(store, options, workspace);

  const budget = new TurnBudget();
  const toolbox = await AgentToolbox.create(workspace, input.bridge, input.note, { budget, signal });
  const tools = toolbox.definitions();
  const pageToolNames = tools.map((tool) => tool.function.name).filter((name) => !BUILT_IN_TOOL_NAMES.includes(name));
  conversation.record.messages[0] = { role: "system", content: buildSystemPrompt(pageToolNames) };
  conversation.record.model = options.model;
  emit({ type: "conversation-started", conversationId: conversation.record.conversationId, resumed: conversation.resumed });

  const messages = conversation.record.messages;
  messages.push({ role: "user", content: input.prompt });
  const save = async (): Promise<void> => {
    const trimmed = await store.save(conversation.record);
    if (trimmed.toolResults + trimmed.toolArguments + trimmed.removedMessages + trimmed.clippedMessages > 0) {
      input.note(`the conversation was trimmed to stay under its size cap: ${JSON.stringify(trimmed)}`);
    }
  };
  await save();

  const usage = { promptTokens: 0, outputTokens: 0 };
  for (let round = 1; ; round += 1) {
    if (signal.aborted) throw signal.reason;
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
      signal,
      budget,
      keepToolCalls: MAX_TOOL_CALLS_PER_ANSWER + MAX_REFUSED_CALLS_ANSWERED,
      ...(input.idleTimeoutMs !== undefined ? { idleTimeoutMs: input.idleTimeoutMs } : {}),
      onContent: (delta) => emit({ type: "text-delta", messageId, delta }),
    });
    usage.promptTokens += answer.promptTokens;
    usage.outputTokens += answer.outputTokens;
    if (answer.content !== "") emit({ type: "message-completed", messageId, text: answer.content });
    if (answer.doneReason === "length") input.note(`round ${round}: the model stopped at its length limit`);

    if (answer.toolCallCount === 0) {
      messages.push({ role: "assistant", content: answer.content });
      await save();
      emit({ type: "turn-completed", rounds: round, usage });
      return;
    }

    const runnable = budget.runnableCalls(answer.toolCallCount);
    const toRun = answer.toolCalls.slice(0, runnable);
    const refusedListed = answer.toolCalls.slice(runnable, runnable + MAX_REFUSED_CALLS_ANSWERED);
    const refusedCount = answer.toolCallCount - runnable;
    // Stored as a real Ollama takes them back: arguments an object; a refused call without its (unused) arguments.
    messages.push({
      role: "assistant",
      content: answer.content,
      tool_calls: [
        ...toRun.map((call) => ({
          function: { name: call.function.name, arguments: isPlainObject(call.function.arguments) ? call.function.arguments : {} },
        })),
        ...refusedListed.map((call) => ({ function: { name: call.function.name, arguments: {} } })),
      ],
    });
    for (const [index, call] of toRun.entries()) {
      const { name, arguments: args } = call.function;
      const description = toolbox.describe(name, args);
      const activity = { id: `tool-${round}-${index + 1}`, kind: description.kind, title: description.title };
      emit({ type: "activity", activity: { ...activity, status: "started", detail: capDetail(JSON.stringify(args) ?? "") } });
      const outcome = await toolbox.execute(name, args);
      if (signal.aborted) throw signal.reason;
      budget.callsRun += 1;
      const failed = !outcome.ok || isFailedRun(outcome.result);
      emit({
        type: "activity",
        activity: {
          ...activity,
          status: failed ? "failed" : "completed",
          detail: capDetail(outcome.ok ? JSON.stringify(outcome.result) : `${outcome.error.code}: ${outcome.error.message}`),
        },
      });
      messages.push({ role: "tool", tool_name: name, content: JSON.stringify(outcome) });
    }
    if (refusedCount > 0) {
      const refusal = refusalOf(answer.toolCallCount, runnable, refusedCount, refusedListed.length);
      emit({
        type: "activity",
        activity: {
          id: `tool-calls-refused-${round}`,
          kind: "tool",
          status: "failed",
          title: `${refusedCount} of ${answer.toolCallCount} tool calls refused`,
          detail: capDetail(refusal.message),
        },
      });
      const content = JSON.stringify({ ok: false, error: { code: refusal.code, message: refusal.message } });
      for (const call of refusedListed) messages.push({ role: "tool", tool_name: call.function.name, content });
    }
    await save();
    if (round >= options.maxToolRounds) {
      throw new TurnFailure(
        new PedelecError(
          "AGENT_TOOL_ROUNDS_EXCEEDED",
          `the model was still calling tools after ${options.maxToolRounds} rounds; the turn was stopped`,
        ),
      );
    }
  }
}

/** The tool error every refused call of an answer gets. */
function refusalOf(callCount: number, ran: number, refused: number, listed: number): PedelecError {
  const unlisted = refused - listed;
  return new PedelecError(
    "AGENT_TOOL_CALLS_EXCEEDED",
    `refused: this answer made ${callCount} tool calls and ${refused} calls were refused without running; only ${ran} ran ` +
      `(at most ${MAX_TOOL_CALLS_PER_ANSWER} per answer and ${MAX_TOOL_CALLS_PER_TURN} per turn)` +
      (ran === 0 ? "; this turn has run all the calls it may, so answer the user with what you have" : "") +
      (unlisted > 0 ? `; ${unlisted} of the refused calls are not repeated here` : "") +
      ". Make fewer calls, read their results, then continue.",
  );
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
