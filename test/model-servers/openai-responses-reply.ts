import { argumentChunks } from "./argument-chunks.js";
import type { TokenCounts } from "./model-server-types.js";
import { typedEvent } from "./sse-frames.js";
import type { ContentReply, ReplyContext, SseEvent, StreamedAnswer } from "./wire-format.js";

function usageBlock(usage: TokenCounts) {
  return {
    input_tokens: usage.inputTokens,
    input_tokens_details: { cached_tokens: usage.cachedInputTokens ?? 0 },
    output_tokens: usage.outputTokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: usage.inputTokens + usage.outputTokens,
  };
}

/** Whether the request offered `name` as a freeform (`custom`) tool, whose calls carry text instead of JSON arguments. */
function isCustomTool(context: ReplyContext, name: string): boolean {
  const tools = (context.request.body as { tools?: { type?: string; name?: string }[] }).tools ?? [];
  return tools.some((tool) => tool.name === name && tool.type === "custom");
}

/** The output item, its deltas as events, and the item as done. */
function outputItem(reply: ContentReply, context: ReplyContext) {
  const id = context.nextId(reply.kind === "text" ? "msg_" : "fc_");
  if (reply.kind === "text") {
    const text = reply.deltas.join("");
    const part = { type: "output_text", text: "", annotations: [] };
    const where = { item_id: id, output_index: 0, content_index: 0 };
    return {
      added: { id, type: "message", status: "in_progress", role: "assistant", content: [] },
      deltas: [
        typedEvent({ type: "response.content_part.added", ...where, part }),
        ...reply.deltas.map((delta) => typedEvent({ type: "response.output_text.delta", ...where, delta })),
      ],
      ending: [
        typedEvent({ type: "response.output_text.done", ...where, text }),
        typedEvent({ type: "response.content_part.done", ...where, part: { ...part, text } }),
      ],
      done: { id, type: "message", status: "completed", role: "assistant", content: [{ ...part, text }] },
    };
  }
  const call_id = context.nextId("call_");
  const where = { item_id: id, output_index: 0 };
  if (isCustomTool(context, reply.name)) {
    const input = typeof reply.input.input === "string" ? reply.input.input : JSON.stringify(reply.input);
    return {
      added: { id, type: "custom_tool_call", status: "in_progress", call_id, name: reply.name, input: "" },
      deltas: [typedEvent({ type: "response.custom_tool_call_input.delta", ...where, delta: input })],
      ending: [typedEvent({ type: "response.custom_tool_call_input.done", ...where, input })],
      done: { id, type: "custom_tool_call", status: "completed", call_id, name: reply.name, input },
    };
  }
  const chunks = argumentChunks(reply.input);
  const args = chunks.join("");
  const called = { call_id, name: reply.name, ...(reply.namespace ? { namespace: reply.namespace } : {}) };
  return {
    added: { id, type: "function_call", status: "in_progress", ...called, arguments: "" },
    deltas: chunks.map((delta) => typedEvent({ type: "response.function_call_arguments.delta", ...where, delta })),
    ending: [typedEvent({ type: "response.function_call_arguments.done", ...where, arguments: args })],
    done: { id, type: "function_call", status: "completed", ...called, arguments: args },
  };
}

/** The streamed answer: response.created, one output item with its deltas, and response.completed with the usage. */
export function openAiResponsesStream(reply: ContentReply, context: ReplyContext): StreamedAnswer {
  const response = {
    id: context.nextId("resp_"),
    object: "response",
    created_at: Math.floor(Date.now() / 1000),
    model: context.request.model ?? "scripted",
  };
  const item = outputItem(reply, context);
  const opening: SseEvent[] = [
    typedEvent({ type: "response.created", response: { ...response, status: "in_progress", output: [] } }),
    typedEvent({ type: "response.output_item.added", output_index: 0, item: item.added }),
    ...item.deltas,
  ];
  const closing: SseEvent[] = [
    ...item.ending,
    typedEvent({ type: "response.output_item.done", output_index: 0, item: item.done }),
    typedEvent({ type: "response.completed", response: { ...response, status: "completed", output: [item.done], usage: usageBlock(reply.usage) } }),
  ];
  return { opening, closing };
}
