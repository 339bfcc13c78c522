import type { TokenCounts } from "./model-server-types.js";
import { typedEvent } from "./sse-frames.js";
import { argumentChunks } from "./argument-chunks.js";
import type { ContentReply, ReplyContext, SseEvent, StreamedAnswer } from "./wire-format.js";

function usageBlock(usage: TokenCounts) {
  return {
    input_tokens: usage.inputTokens,
    output_tokens: usage.outputTokens,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: usage.cachedInputTokens ?? 0,
  };
}

const stopReason = (reply: ContentReply) => (reply.kind === "text" ? "end_turn" : "tool_use");

function contentBlock(reply: ContentReply, toolUseId: string) {
  return reply.kind === "text"
    ? { type: "text", text: reply.deltas.join("") }
    : { type: "tool_use", id: toolUseId, name: reply.name, input: reply.input };
}

/** The model name an answer reports: the requested one. */
function modelOf(context: ReplyContext): string {
  return context.request.model ?? "claude-scripted";
}

/** The streamed answer: message_start, one content block with its deltas, message_delta and message_stop. */
export function anthropicMessagesStream(reply: ContentReply, context: ReplyContext): StreamedAnswer {
  const message = {
    id: context.nextId("msg_"),
    type: "message",
    role: "assistant",
    model: modelOf(context),
    content: [],
    stop_reason: null,
    stop_sequence: null,
  };
  const opening: SseEvent[] = [
    typedEvent({ type: "message_start", message: { ...message, usage: { ...usageBlock(reply.usage), output_tokens: 1 } } }),
  ];
  if (reply.kind === "text") {
    opening.push(typedEvent({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }));
    for (const text of reply.deltas) opening.push(typedEvent({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text } }));
  } else {
    const block = { type: "tool_use", id: context.nextId("toolu_"), name: reply.name, input: {} };
    opening.push(typedEvent({ type: "content_block_start", index: 0, content_block: block }));
    for (const partial_json of ["", ...argumentChunks(reply.input)]) {
      opening.push(typedEvent({ type: "content_block_delta", index: 0, delta: { type: "input_json_delta", partial_json } }));
    }
  }
  const closing = [
    typedEvent({ type: "content_block_stop", index: 0 }),
    typedEvent({ type: "message_delta", delta: { stop_reason: stopReason(reply), stop_sequence: null }, usage: usageBlock(reply.usage) }),
    typedEvent({ type: "message_stop" }),
  ];
  return { opening, closing };
}

/** The plain Message an Anthropic request with `stream:false` gets. */
export function anthropicMessage(reply: ContentReply, context: ReplyContext): unknown {
  return {
    id: context.nextId("msg_"),
    type: "message",
    role: "assistant",
    model: modelOf(context),
    content: [contentBlock(reply, context.nextId("toolu_"))],
    stop_reason: stopReason(reply),
    stop_sequence: null,
    usage: usageBlock(reply.usage),
  };
}

const ERRORS: Record<number, { type: string; message: string }> = {
  400: { type: "invalid_request_error", message: "the request is not valid (scripted)" },
  // Claude Code recognises this wording: it then prints "Invalid API key · Fix external API key".
  401: { type: "authentication_error", message: "invalid x-api-key" },
  403: { type: "permission_error", message: "the API key may not use this resource (scripted)" },
  429: { type: "rate_limit_error", message: "rate limit reached (scripted)" },
  529: { type: "overloaded_error", message: "Overloaded" },
};

/** Anthropic's error body: `{"type":"error","error":{"type","message"}}`; 500 and 503 are `api_error`s. */
export function anthropicErrorBody(status: number, message: string | undefined): unknown {
  const known = ERRORS[status] ?? { type: "api_error", message: "internal server error (scripted)" };
  return { type: "error", error: { type: known.type, message: message ?? known.message } };
}
