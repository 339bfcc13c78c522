import { z } from "zod";
import { checkStreamLine, readStreamLine, stringOtherThan } from "../stream-line.js";
import type { SetAsideStreamLine } from "../stream-line.js";

/*
 * The parts of Claude Code's `--output-format stream-json` lines that the adapter reads. Lenient on purpose:
 * extra fields, unknown line types, unknown content blocks and unknown stream events pass, so a newer CLI
 * keeps working; a known shape that lacks the fields we rely on is rejected.
 */

export const claudeTextBlockSchema = z.looseObject({ type: z.literal("text"), text: z.string() });
export const claudeThinkingBlockSchema = z.looseObject({ type: z.literal("thinking"), thinking: z.string() });
export const claudeToolUseBlockSchema = z.looseObject({
  type: z.literal("tool_use"),
  id: z.string().min(1),
  name: z.string().min(1),
  input: z.unknown(),
});
const assistantBlockSchema = z.union([
  claudeTextBlockSchema,
  claudeThinkingBlockSchema,
  claudeToolUseBlockSchema,
  z.looseObject({ type: stringOtherThan(["text", "thinking", "tool_use"]) }),
]);

export const claudeToolResultBlockSchema = z.looseObject({
  type: z.literal("tool_result"),
  tool_use_id: z.string().min(1),
  /** A string, or content blocks (text, image, …). */
  content: z.union([z.string(), z.array(z.looseObject({ type: z.string() }))]).nullish(),
  is_error: z.boolean().nullish(),
});
const userBlockSchema = z.union([claudeToolResultBlockSchema, z.looseObject({ type: stringOtherThan(["tool_result"]) })]);

/** Set on lines produced inside a subagent (Task tool); null or absent for the main agent. */
const parentToolUseIdSchema = z.string().nullish();

/**
 * Token counts of one model request (Anthropic's `usage`). Only read for the usage report, so a count of an unexpected
 * shape is dropped rather than making the whole line unreadable.
 */
const tokenCountSchema = z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER).optional().catch(undefined);
export const claudeUsageSchema = z
  .object({
    input_tokens: tokenCountSchema,
    output_tokens: tokenCountSchema,
    cache_creation_input_tokens: tokenCountSchema,
    cache_read_input_tokens: tokenCountSchema,
  })
  .optional()
  .catch(undefined);
export type ClaudeUsage = NonNullable<z.infer<typeof claudeUsageSchema>>;

/** An HTTP status Claude Code reports from the model's service (`api_error_status`, `error_status`); null when none. */
const httpStatusSchema = z.number().int().nullish().catch(null);

export const claudeSystemInitSchema = z.looseObject({
  type: z.literal("system"),
  subtype: z.literal("init"),
  session_id: z.string().min(1),
  model: z.string().optional(),
  cwd: z.string().optional(),
});

/**
 * A request to the model's service failed and Claude Code retries it: `error_status` is the HTTP status (null when no
 * answer came, e.g. a refused connection), `error` Claude Code's name for the failure (`overloaded`,
 * `authentication_failed`, `unknown`, …). Claude Code 2.1.332 prints one per attempt, 10 by default over ~3 minutes.
 */
export const claudeApiRetrySchema = z.looseObject({
  type: z.literal("system"),
  subtype: z.literal("api_retry"),
  attempt: z.number().int().nonnegative().optional().catch(undefined),
  max_retries: z.number().int().nonnegative().optional().catch(undefined),
  retry_delay_ms: z.number().nonnegative().optional().catch(undefined),
  error_status: httpStatusSchema,
  error: z.string().nullish().catch(null),
});
export type ClaudeApiRetryLine = z.infer<typeof claudeApiRetrySchema>;

/*
 * Stream events are most of a run's lines (one per token), so their schemas keep only the fields the parser reads
 * (`z.object` drops the rest instead of copying them) and pick the known event by its type before trying the catch-all.
 */
const textDeltaSchema = z.object({ type: z.literal("text_delta"), text: z.string() });
const knownStreamEventSchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("message_start"), message: z.object({ id: z.string().min(1), usage: claudeUsageSchema }) }),
  z.object({
    type: z.literal("content_block_delta"),
    index: z.number().int().nonnegative(),
    delta: z.union([textDeltaSchema, z.object({ type: stringOtherThan(["text_delta"]) })]),
  }),
  /** The message's final stop reason and its usage so far (output tokens, cumulative within the message). */
  z.object({ type: z.literal("message_delta"), usage: claudeUsageSchema }),
  z.object({ type: z.literal("message_stop") }),
]);
export const claudeStreamEventSchema = z.union([
  knownStreamEventSchema,
  z.object({ type: stringOtherThan(["message_start", "content_block_delta", "message_delta", "message_stop"]) }),
]);

export const claudeStreamEventLineSchema = z.object({
  type: z.literal("stream_event"),
  event: claudeStreamEventSchema,
  parent_tool_use_id: parentToolUseIdSchema,
});

export const claudeAssistantLineSchema = z.looseObject({
  type: z.literal("assistant"),
  message: z.looseObject({
    id: z.string().min(1).optional(),
    model: z.string().optional(),
    content: z.array(assistantBlockSchema),
    usage: claudeUsageSchema,
  }),
  parent_tool_use_id: parentToolUseIdSchema,
  /** Why the message is an error, e.g. `authentication_failed`, `server_error`, `rate_limit`. */
  error: z.string().nullish(),
  /** True on the synthetic message Claude Code writes when a request to the model's service failed for good. */
  is_api_error_message: z.boolean().nullish().catch(null),
  /** The HTTP status of that failure (null for a refused connection). */
  api_error_status: httpStatusSchema,
});

export const claudeUserLineSchema = z.looseObject({
  type: z.literal("user"),
  message: z.looseObject({ content: z.union([z.string(), z.array(userBlockSchema)]) }),
  parent_tool_use_id: parentToolUseIdSchema,
});

/**
 * The run's last line. A failed request to the model's service ends with `"subtype":"success","is_error":true`,
 * `terminal_reason:"api_error"` and its HTTP status in `api_error_status` (claude 2.1.332), so `is_error` decides.
 */
export const claudeResultLineSchema = z.looseObject({
  type: z.literal("result"),
  /** `success`, or `error_during_execution`, `error_max_turns`, `error_max_budget_usd`, … */
  subtype: z.string().min(1),
  is_error: z.boolean().optional(),
  result: z.string().optional(),
  session_id: z.string().min(1).optional(),
  errors: z.array(z.unknown()).optional(),
  /** `completed`, `api_error`, `aborted_tools`, … */
  terminal_reason: z.string().nullish().catch(null),
  api_error_status: httpStatusSchema,
  /** The whole run's tokens, over all its requests. */
  usage: claudeUsageSchema,
});

export type ClaudeStreamEvent = z.infer<typeof claudeStreamEventSchema>;
export type ClaudeSystemInitLine = z.infer<typeof claudeSystemInitSchema>;
export type ClaudeAssistantLine = z.infer<typeof claudeAssistantLineSchema>;
export type ClaudeUserLine = z.infer<typeof claudeUserLineSchema>;
export type ClaudeResultLine = z.infer<typeof claudeResultLineSchema>;
export type ClaudeToolResultBlock = z.infer<typeof claudeToolResultBlockSchema>;

export type ClaudeTextBlock = z.infer<typeof claudeTextBlockSchema>;
export type ClaudeToolUseBlock = z.infer<typeof claudeToolUseBlockSchema>;

/*
 * Guards for the union members. They are sound because the catch-all arms above refuse the known type
 * names: a block that says "text" and passed validation has the text block's fields.
 */
type Typed = { type: string };
export const isClaudeTextBlock = (block: Typed): block is ClaudeTextBlock => block.type === "text";
export const isClaudeToolUseBlock = (block: Typed): block is ClaudeToolUseBlock => block.type === "tool_use";
export const isClaudeToolResultBlock = (block: Typed): block is ClaudeToolResultBlock => block.type === "tool_result";
export const isClaudeMessageStart = (event: Typed): event is { type: "message_start"; message: { id: string; usage?: ClaudeUsage | undefined } } =>
  event.type === "message_start";
export const isClaudeMessageDelta = (event: Typed): event is { type: "message_delta"; usage?: ClaudeUsage | undefined } =>
  event.type === "message_delta";
export const isClaudeContentBlockDelta = (event: Typed): event is { type: "content_block_delta"; index: number; delta: Typed } =>
  event.type === "content_block_delta";
export const isClaudeTextDelta = (delta: Typed): delta is { type: "text_delta"; text: string } => delta.type === "text_delta";

/** One stdout line, classified. */
export type ClaudeStreamLine =
  | { kind: "system-init"; line: ClaudeSystemInitLine }
  | { kind: "api-retry"; line: ClaudeApiRetryLine }
  | { kind: "stream-event"; line: z.infer<typeof claudeStreamEventLineSchema> }
  | { kind: "assistant"; line: ClaudeAssistantLine }
  | { kind: "user"; line: ClaudeUserLine }
  | { kind: "result"; line: ClaudeResultLine }
  /** Lines set aside, among them types the adapter does not read (system/status, rate_limit_event, …). */
  | SetAsideStreamLine;

/** Classifies and validates one stdout line of `claude -p --output-format stream-json`. */
export function classifyClaudeStreamLine(text: string): ClaudeStreamLine {
  const read = readStreamLine(text, "type");
  if (read === null) return { kind: "not-json" };
  switch (read.lineType) {
    case "system":
      if (read.value.subtype === "init") return checkStreamLine(read, claudeSystemInitSchema, (line) => ({ kind: "system-init", line }));
      if (read.value.subtype === "api_retry") return checkStreamLine(read, claudeApiRetrySchema, (line) => ({ kind: "api-retry", line }));
      return { kind: "unknown", lineType: `system/${String(read.value.subtype)}` };
    case "stream_event":
      return checkStreamLine(read, claudeStreamEventLineSchema, (line) => ({ kind: "stream-event", line }));
    case "assistant":
      return checkStreamLine(read, claudeAssistantLineSchema, (line) => ({ kind: "assistant", line }));
    case "user":
      return checkStreamLine(read, claudeUserLineSchema, (line) => ({ kind: "user", line }));
    case "result":
      return checkStreamLine(read, claudeResultLineSchema, (line) => ({ kind: "result", line }));
    default:
      return { kind: "unknown", lineType: read.lineType };
  }
}
