import { z } from "zod";

/*
 * The parts of Claude Code's `--output-format stream-json` lines that the adapter reads. Lenient on purpose:
 * extra fields, unknown line types, unknown content blocks and unknown stream events pass, so a newer CLI
 * keeps working; a known shape that lacks the fields we rely on is rejected.
 */

/** A string field whose value is none of `taken` (the catch-all arm of a union of known shapes). */
function otherThan(taken: readonly string[]) {
  return z.string().refine((value) => !taken.includes(value), { message: "known type with missing or malformed fields" });
}

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
  z.looseObject({ type: otherThan(["text", "thinking", "tool_use"]) }),
]);

export const claudeToolResultBlockSchema = z.looseObject({
  type: z.literal("tool_result"),
  tool_use_id: z.string().min(1),
  /** A string, or content blocks (text, image, …). */
  content: z.union([z.string(), z.array(z.looseObject({ type: z.string() }))]).nullish(),
  is_error: z.boolean().nullish(),
});
const userBlockSchema = z.union([claudeToolResultBlockSchema, z.looseObject({ type: otherThan(["tool_result"]) })]);

/** Set on lines produced inside a subagent (Task tool); null or absent for the main agent. */
const parentToolUseIdSchema = z.string().nullish();

export const claudeSystemInitSchema = z.looseObject({
  type: z.literal("system"),
  subtype: z.literal("init"),
  session_id: z.string().min(1),
  model: z.string().optional(),
  cwd: z.string().optional(),
});

const textDeltaSchema = z.looseObject({ type: z.literal("text_delta"), text: z.string() });
export const claudeStreamEventSchema = z.union([
  z.looseObject({ type: z.literal("message_start"), message: z.looseObject({ id: z.string().min(1) }) }),
  z.looseObject({
    type: z.literal("content_block_delta"),
    index: z.number().int().nonnegative(),
    delta: z.union([textDeltaSchema, z.looseObject({ type: otherThan(["text_delta"]) })]),
  }),
  z.looseObject({ type: z.literal("message_stop") }),
  z.looseObject({ type: otherThan(["message_start", "content_block_delta", "message_stop"]) }),
]);

export const claudeStreamEventLineSchema = z.looseObject({
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
  }),
  parent_tool_use_id: parentToolUseIdSchema,
  /** Why the message is an error, e.g. `authentication_failed`, `rate_limit`. */
  error: z.string().nullish(),
});

export const claudeUserLineSchema = z.looseObject({
  type: z.literal("user"),
  message: z.looseObject({ content: z.union([z.string(), z.array(userBlockSchema)]) }),
  parent_tool_use_id: parentToolUseIdSchema,
});

export const claudeResultLineSchema = z.looseObject({
  type: z.literal("result"),
  /** `success`, or `error_during_execution`, `error_max_turns`, `error_max_budget_usd`, … */
  subtype: z.string().min(1),
  is_error: z.boolean().optional(),
  result: z.string().optional(),
  session_id: z.string().min(1).optional(),
  errors: z.array(z.unknown()).optional(),
});

export type ClaudeStreamEvent = z.infer<typeof claudeStreamEventSchema>;
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
export const isClaudeMessageStart = (event: Typed): event is { type: "message_start"; message: { id: string } } =>
  event.type === "message_start";
export const isClaudeContentBlockDelta = (
  event: Typed,
): event is { type: "content_block_delta"; index: number; delta: Typed } => event.type === "content_block_delta";
export const isClaudeTextDelta = (delta: Typed): delta is { type: "text_delta"; text: string } =>
  delta.type === "text_delta";

/** One stdout line, classified. */
export type ClaudeStreamLine =
  | { kind: "system-init"; line: z.infer<typeof claudeSystemInitSchema> }
  | { kind: "stream-event"; line: z.infer<typeof claudeStreamEventLineSchema> }
  | { kind: "assistant"; line: ClaudeAssistantLine }
  | { kind: "user"; line: ClaudeUserLine }
  | { kind: "result"; line: ClaudeResultLine }
  /** JSON, but of a type the adapter does not read (system/status, rate_limit_event, …). */
  | { kind: "unknown"; lineType: string }
  /** Not a JSON object with a string `type`. */
  | { kind: "not-json" }
  /** A known type without the fields the adapter relies on. */
  | { kind: "invalid"; lineType: string; issues: string };

/** Classifies and validates one stdout line of `claude -p --output-format stream-json`. */
export function classifyClaudeStreamLine(text: string): ClaudeStreamLine {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { kind: "not-json" };
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return { kind: "not-json" };
  const { type, subtype } = value as { type?: unknown; subtype?: unknown };
  if (typeof type !== "string") return { kind: "not-json" };
  switch (type) {
    case "system":
      if (subtype !== "init") return { kind: "unknown", lineType: `system/${String(subtype)}` };
      return check(type, claudeSystemInitSchema, value, (line) => ({ kind: "system-init", line }));
    case "stream_event":
      return check(type, claudeStreamEventLineSchema, value, (line) => ({ kind: "stream-event", line }));
    case "assistant":
      return check(type, claudeAssistantLineSchema, value, (line) => ({ kind: "assistant", line }));
    case "user":
      return check(type, claudeUserLineSchema, value, (line) => ({ kind: "user", line }));
    case "result":
      return check(type, claudeResultLineSchema, value, (line) => ({ kind: "result", line }));
    default:
      return { kind: "unknown", lineType: type };
  }
}

function check<Schema extends z.ZodType>(
  lineType: string,
  schema: Schema,
  value: unknown,
  wrap: (line: z.infer<Schema>) => ClaudeStreamLine,
): ClaudeStreamLine {
  const parsed = schema.safeParse(value);
  if (parsed.success) return wrap(parsed.data);
  const issues = parsed.error.issues
    .slice(0, 5)
    .map((issue) => `${issue.path.length > 0 ? issue.path.join(".") : "(line)"}: ${issue.message}`)
    .join("; ");
  return { kind: "invalid", lineType, issues };
}
