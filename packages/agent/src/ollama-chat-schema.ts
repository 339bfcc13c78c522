import { z } from "zod";
import type { OllamaThinkLevel } from "@pedelec/protocol/agent-wire";

/**
 * The shapes of Ollama's native chat API (`POST /api/chat`), as much of them as the agent uses. Unknown fields pass:
 * Ollama adds fields between releases, and a compatible server may send more.
 */

/** A tool call as Ollama streams it: the arguments are an object, not JSON text. */
export const ollamaToolCallSchema = z.object({
  id: z.string().optional(),
  function: z.object({
    index: z.number().int().optional(),
    name: z.string().min(1),
    arguments: z.record(z.string(), z.unknown()).default({}),
  }),
});
export type OllamaToolCall = z.infer<typeof ollamaToolCallSchema>;

/**
 * A tool call as an endpoint may really send it: the arguments are whatever it sent (a string, a number, nothing). The
 * agent answers anything but an object with a tool error the model reads, and stores the call with `{}`, so the next
 * request is one a real Ollama accepts.
 */
export const receivedToolCallSchema = z.object({
  id: z.string().optional(),
  function: z.object({
    index: z.number().int().optional(),
    name: z.string().min(1),
    arguments: z.unknown(),
  }),
});
export type ReceivedToolCall = z.infer<typeof receivedToolCallSchema>;

/** One line of the NDJSON answer: a content, thinking or tool-call piece, or the final `done: true` line. */
export const ollamaChatChunkSchema = z.object({
  model: z.string().optional(),
  created_at: z.string().optional(),
  message: z
    .object({
      role: z.literal("assistant"),
      content: z.string().optional(),
      thinking: z.string().optional(),
      tool_calls: z.array(receivedToolCallSchema).optional(),
    })
    .optional(),
  done: z.boolean(),
  done_reason: z.string().optional(),
  prompt_eval_count: z.number().int().min(0).optional(),
  eval_count: z.number().int().min(0).optional(),
});
export type OllamaChatChunk = z.infer<typeof ollamaChatChunkSchema>;

/** A message of the conversation as the chat API takes it (and as the conversation store keeps it). */
export const ollamaMessageSchema = z.discriminatedUnion("role", [
  z.object({ role: z.literal("system"), content: z.string() }),
  z.object({ role: z.literal("user"), content: z.string() }),
  z.object({
    role: z.literal("assistant"),
    content: z.string(),
    tool_calls: z.array(ollamaToolCallSchema).optional(),
  }),
  z.object({ role: z.literal("tool"), tool_name: z.string(), content: z.string() }),
]);
export type OllamaMessage = z.infer<typeof ollamaMessageSchema>;

/** A tool as the model is offered it. */
export interface OllamaToolDefinition {
  type: "function";
  function: { name: string; description: string; parameters: unknown };
}

/** The request body of one round. */
export interface OllamaChatRequest {
  model: string;
  messages: OllamaMessage[];
  tools: OllamaToolDefinition[];
  stream: true;
  options?: { num_ctx?: number; temperature?: number };
  think?: boolean | OllamaThinkLevel;
}
