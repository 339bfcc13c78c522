import { z } from "zod";
import { checkStreamLine, readStreamLine, stringOtherThan } from "../stream-line.js";
import type { SetAsideStreamLine } from "../stream-line.js";

/*
 * The parts of `codex exec --json` lines (ThreadEvent JSONL) that the adapter reads. Extra fields, unknown event
 * types and unknown item types pass, so a newer CLI keeps working; a known shape that lacks the fields the adapter
 * relies on is rejected.
 */

const itemIdSchema = z.string().min(1);

export const codexAgentMessageSchema = z.looseObject({ id: itemIdSchema, type: z.literal("agent_message"), text: z.string() });

export const codexCommandExecutionSchema = z.looseObject({
  id: itemIdSchema,
  type: z.literal("command_execution"),
  command: z.string(),
  aggregated_output: z.string().nullish(),
  exit_code: z.number().int().nullish(),
  /** in_progress | completed | failed | declined */
  status: z.string().min(1),
});

export const codexFileChangeSchema = z.looseObject({
  id: itemIdSchema,
  type: z.literal("file_change"),
  changes: z.array(z.looseObject({ path: z.string().min(1), kind: z.string().min(1) })),
  /** completed | failed (absent on some versions' started items) */
  status: z.string().min(1).optional(),
});

export const codexMcpToolCallSchema = z.looseObject({
  id: itemIdSchema,
  type: z.literal("mcp_tool_call"),
  server: z.string(),
  tool: z.string().min(1),
  status: z.string().min(1).optional(),
  error: z.looseObject({ message: z.string() }).nullish(),
});

export const codexWebSearchSchema = z.looseObject({ id: itemIdSchema, type: z.literal("web_search"), query: z.string() });

const KNOWN_ITEM_TYPES = ["agent_message", "command_execution", "file_change", "mcp_tool_call", "web_search"];
const codexItemSchema = z.union([
  codexAgentMessageSchema,
  codexCommandExecutionSchema,
  codexFileChangeSchema,
  codexMcpToolCallSchema,
  codexWebSearchSchema,
  /** reasoning, plan, todo_list, collab_tool_call, error (a non-fatal notice), and item types of newer versions. */
  z.looseObject({ id: itemIdSchema, type: stringOtherThan(KNOWN_ITEM_TYPES) }),
]);

export const codexThreadStartedSchema = z.looseObject({ type: z.literal("thread.started"), thread_id: z.string().min(1) });
export const codexItemLineSchema = z.looseObject({
  type: z.enum(["item.started", "item.updated", "item.completed"]),
  item: codexItemSchema,
});
/** A token count, only read for the usage report: one of an unexpected shape is dropped instead of failing the line. */
const tokenCountSchema = z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER).optional().catch(undefined);
/**
 * The turn's tokens over all its requests (codex 0.169.0 prints `input_tokens`, `cached_input_tokens`,
 * `cache_write_input_tokens`, `output_tokens`, `reasoning_output_tokens`).
 */
export const codexUsageSchema = z
  .object({
    input_tokens: tokenCountSchema,
    cached_input_tokens: tokenCountSchema,
    cache_write_input_tokens: tokenCountSchema,
    output_tokens: tokenCountSchema,
    reasoning_output_tokens: tokenCountSchema,
  })
  .optional()
  .catch(undefined);
export type CodexUsage = NonNullable<z.infer<typeof codexUsageSchema>>;

export const codexTurnCompletedSchema = z.looseObject({ type: z.literal("turn.completed"), usage: codexUsageSchema });
export const codexTurnFailedSchema = z.looseObject({ type: z.literal("turn.failed"), error: z.looseObject({ message: z.string() }) });
export const codexErrorSchema = z.looseObject({ type: z.literal("error"), message: z.string() });

export type CodexItem = z.infer<typeof codexItemSchema>;
export type CodexItemLine = z.infer<typeof codexItemLineSchema>;
export type CodexAgentMessage = z.infer<typeof codexAgentMessageSchema>;
export type CodexCommandExecution = z.infer<typeof codexCommandExecutionSchema>;
export type CodexFileChange = z.infer<typeof codexFileChangeSchema>;
export type CodexMcpToolCall = z.infer<typeof codexMcpToolCallSchema>;
export type CodexWebSearch = z.infer<typeof codexWebSearchSchema>;

/*
 * Guards for the union members. They are sound because the catch-all arm refuses the known type names: an item
 * that says "agent_message" and passed validation has the agent message's fields.
 */
type Typed = { type: string };
export const isCodexAgentMessage = (item: Typed): item is CodexAgentMessage => item.type === "agent_message";
export const isCodexCommandExecution = (item: Typed): item is CodexCommandExecution => item.type === "command_execution";
export const isCodexFileChange = (item: Typed): item is CodexFileChange => item.type === "file_change";
export const isCodexMcpToolCall = (item: Typed): item is CodexMcpToolCall => item.type === "mcp_tool_call";
export const isCodexWebSearch = (item: Typed): item is CodexWebSearch => item.type === "web_search";

/** One stdout line, classified. */
export type CodexStreamLine =
  | { kind: "thread-started"; threadId: string }
  | { kind: "item"; line: CodexItemLine }
  | { kind: "turn-completed"; usage: CodexUsage | undefined }
  | { kind: "turn-failed"; message: string }
  | { kind: "error"; message: string }
  /** Lines set aside, among them types the adapter does not read (turn.started, item.plan.delta, request_user_input, …). */
  | SetAsideStreamLine;

/** Classifies and validates one stdout line of `codex exec --json`. */
export function classifyCodexStreamLine(text: string): CodexStreamLine {
  const read = readStreamLine(text, "type");
  if (read === null) return { kind: "not-json" };
  switch (read.lineType) {
    case "thread.started":
      return checkStreamLine(read, codexThreadStartedSchema, (line) => ({ kind: "thread-started", threadId: line.thread_id }));
    case "item.started":
    case "item.updated":
    case "item.completed":
      return checkStreamLine(read, codexItemLineSchema, (line) => ({ kind: "item", line }));
    case "turn.completed":
      return checkStreamLine(read, codexTurnCompletedSchema, (line) => ({ kind: "turn-completed", usage: line.usage }));
    case "turn.failed":
      return checkStreamLine(read, codexTurnFailedSchema, (line) => ({ kind: "turn-failed", message: line.error.message }));
    case "error":
      return checkStreamLine(read, codexErrorSchema, (line) => ({ kind: "error", message: line.message }));
    default:
      return { kind: "unknown", lineType: read.lineType };
  }
}
