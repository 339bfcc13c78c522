import { argumentChunks } from "./argument-chunks.js";
import type { ContentReply, ReplyContext, SseEvent, StreamedAnswer } from "./wire-format.js";

/** The streamed answer: `chat.completion.chunk`s with deltas, one with `finish_reason`, a usage chunk, `[DONE]`. */
export function chatCompletionsStream(reply: ContentReply, context: ReplyContext): StreamedAnswer {
  const head = {
    id: context.nextId("chatcmpl-"),
    object: "chat.completion.chunk",
    created: Math.floor(Date.now() / 1000),
    model: context.request.model ?? "scripted",
  };
  const chunk = (delta: Record<string, unknown>, finishReason: string | null = null): SseEvent => ({
    data: JSON.stringify({ ...head, choices: [{ index: 0, delta, finish_reason: finishReason }] }),
  });
  const opening: SseEvent[] = [];
  if (reply.kind === "text") {
    reply.deltas.forEach((content, index) => {
      opening.push(chunk(index === 0 ? { role: "assistant", content } : { content }));
    });
    if (reply.deltas.length === 0) opening.push(chunk({ role: "assistant", content: "" }));
  } else {
    const call = { index: 0, id: context.nextId("call_"), type: "function", function: { name: reply.name, arguments: "" } };
    opening.push(chunk({ role: "assistant", tool_calls: [call] }));
    for (const piece of argumentChunks(reply.input)) opening.push(chunk({ tool_calls: [{ index: 0, function: { arguments: piece } }] }));
  }
  const { inputTokens, outputTokens, cachedInputTokens = 0 } = reply.usage;
  const usage = {
    prompt_tokens: inputTokens,
    completion_tokens: outputTokens,
    total_tokens: inputTokens + outputTokens,
    prompt_tokens_details: { cached_tokens: cachedInputTokens },
  };
  const closing: SseEvent[] = [
    chunk({}, reply.kind === "text" ? "stop" : "tool_calls"),
    { data: JSON.stringify({ ...head, choices: [], usage }) },
    { data: "[DONE]" },
  ];
  return { opening, closing };
}
