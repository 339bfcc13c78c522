import { truncateUtf8 } from "@pedelec/core/providers/truncate-utf8";
import type { OllamaMessage } from "./ollama-chat-schema.js";

/**
 * The most a stored conversation may hold (its messages as JSON). Past it the oldest bulk goes first, each piece with a
 * note to the model saying what was removed. 4 MiB is about a million tokens, more than any local model's context
 * window: what is trimmed the model could no longer see anyway, and every round re-sends the whole conversation.
 */
export const MAX_CONVERSATION_BYTES = 4 * 1024 * 1024;

/** Room kept under MAX_CONVERSATION_BYTES for the record's other fields (ids, model, workspace, dates). */
const RECORD_OVERHEAD_BYTES = 8 * 1024;

/** A tool-call argument longer than this (as JSON) is replaced by a note when arguments are trimmed. */
const MAX_KEPT_ARGUMENT_BYTES = 256;

/** The first words of the note that stands for removed messages, so a later trim updates it rather than adding one. */
const REMOVED_NOTE_PREFIX = "[Pedelec removed";

/** What a trim did. */
export interface TrimReport {
  toolResults: number;
  toolArguments: number;
  removedMessages: number;
  clippedMessages: number;
}

/**
 * Brings `messages` (system prompt first) under `maxBytes`, in place, taking from the oldest first: tool results the
 * model has read, then large tool-call arguments (the content of a written file), then the results it has not read
 * yet, then whole earlier exchanges, and only then the text of messages still too large. What is left of each says
 * what was removed, so the model knows to call a tool again.
 */
export function trimConversation(messages: OllamaMessage[], maxBytes = MAX_CONVERSATION_BYTES): TrimReport {
  const report: TrimReport = { toolResults: 0, toolArguments: 0, removedMessages: 0, clippedMessages: 0 };
  const budget = maxBytes - RECORD_OVERHEAD_BYTES;
  const sizes = messages.map(sizeOf);
  let total = sizes.reduce((sum, size) => sum + size, 0);
  if (total <= budget) return report;
  const resize = (index: number): void => {
    const size = sizeOf(messages[index]!);
    total += size - sizes[index]!;
    sizes[index] = size;
  };

  const trimResult = (index: number): void => {
    const message = messages[index]!;
    if (message.role !== "tool" || message.content.length <= 200 || message.content.startsWith('{"trimmed":')) return;
    const note = `Pedelec removed this result of ${message.tool_name} (${Buffer.byteLength(message.content)} bytes) to keep the conversation under ${maxBytes} bytes; call the tool again if you need it.`;
    message.content = JSON.stringify({ trimmed: note });
    resize(index);
    report.toolResults += 1;
  };
  const trimArguments = (index: number): void => {
    const message = messages[index]!;
    if (message.role !== "assistant" || message.tool_calls === undefined) return;
    let trimmed = false;
    for (const call of message.tool_calls) {
      for (const [name, value] of Object.entries(call.function.arguments)) {
        const bytes = Buffer.byteLength(JSON.stringify(value) ?? "");
        if (bytes <= MAX_KEPT_ARGUMENT_BYTES) continue;
        call.function.arguments[name] = `[Pedelec removed this argument (${bytes} bytes) to keep the conversation small; the call ran with it]`;
        trimmed = true;
      }
    }
    if (trimmed) {
      resize(index);
      report.toolArguments += 1;
    }
  };

  // The results the model has not read yet (those after the last assistant message) go last of the tool results.
  const lastAssistant = messages.findLastIndex((message) => message.role === "assistant");
  for (let index = 1; index < lastAssistant && total > budget; index += 1) trimResult(index);
  for (let index = 1; index < messages.length && total > budget; index += 1) trimArguments(index);
  for (let index = Math.max(1, lastAssistant); index < messages.length && total > budget; index += 1) trimResult(index);

  // Whole exchanges, oldest first: up to (not including) the next user message, never the last user message.
  const lastUser = messages.findLastIndex((message) => message.role === "user");
  const hasNote = messages[1]?.role === "user" && messages[1].content.startsWith(REMOVED_NOTE_PREFIX);
  const firstRemovable = hasNote ? 2 : 1;
  let end = firstRemovable;
  let removedSize = 0;
  while (total - removedSize > budget && end < lastUser) {
    do {
      removedSize += sizes[end]!;
      end += 1;
    } while (end < lastUser && messages[end]!.role !== "user");
  }
  if (end > firstRemovable) {
    const earlier = hasNote ? Number(/(\d+)/.exec(messages[1]!.content)?.[1] ?? 0) : 0;
    const count = end - firstRemovable;
    report.removedMessages = count;
    messages.splice(firstRemovable, count);
    sizes.splice(firstRemovable, count);
    total -= removedSize;
    const note: OllamaMessage = {
      role: "user",
      content: `${REMOVED_NOTE_PREFIX} ${earlier + count} earlier messages of this conversation to keep it under ${maxBytes} bytes; what they said is no longer known.]`,
    };
    if (hasNote) {
      messages[1] = note;
      resize(1);
    } else {
      messages.splice(1, 0, note);
      sizes.splice(1, 0, sizeOf(note));
      total += sizes[1]!;
    }
  }

  // A single message still too large (a huge prompt or answer): clip the largest until the whole fits.
  while (total > budget) {
    let largest = 0;
    for (let index = 1; index < messages.length; index += 1) if (sizes[index]! > sizes[largest]!) largest = index;
    const message = messages[largest]!;
    const contentBytes = Buffer.byteLength(message.content);
    const keep = Math.max(1024, contentBytes - (total - budget) - 1024);
    if (keep >= contentBytes) break;
    message.content = `${truncateUtf8(message.content, keep).text}\n[Pedelec cut this message from ${contentBytes} bytes to keep the conversation under ${maxBytes} bytes]`;
    resize(largest);
    report.clippedMessages += 1;
  }
  return report;
}

function sizeOf(message: OllamaMessage): number {
  return Buffer.byteLength(JSON.stringify(message)) + 1;
}
