import { z } from "zod";

/*
 * The parts of `cursor-agent -p --output-format stream-json` lines that the adapter reads. Lenient on purpose: extra
 * fields and unknown line types pass, so a newer CLI keeps working; a known line type that lacks the fields we rely
 * on is rejected.
 */

export const cursorSystemInitSchema = z.looseObject({
  type: z.literal("system"),
  subtype: z.literal("init"),
  session_id: z.string().min(1),
  model: z.string().optional(),
  cwd: z.string().optional(),
});

const textPartSchema = z.looseObject({ type: z.string(), text: z.string().optional() });

/**
 * One assistant line. With `--stream-partial-output` Cursor sends several forms: chunks as they arrive (with
 * `timestamp_ms`), the whole message again before tool calls (with `model_call_id`), and the whole response again at
 * the end (without `timestamp_ms`).
 */
export const cursorAssistantLineSchema = z.looseObject({
  type: z.literal("assistant"),
  message: z.looseObject({ content: z.array(textPartSchema) }),
  session_id: z.string().min(1).optional(),
  model_call_id: z.string().optional(),
  timestamp_ms: z.number().optional(),
});

/** `tool_call.<name>ToolCall` = { args, result? }: exactly one key names the tool. */
export const cursorToolCallLineSchema = z.looseObject({
  type: z.literal("tool_call"),
  subtype: z.string().min(1),
  call_id: z.string().min(1),
  tool_call: z.record(z.string(), z.looseObject({ args: z.unknown().optional(), result: z.unknown().optional() })),
  session_id: z.string().min(1).optional(),
});

export const cursorResultLineSchema = z.looseObject({
  type: z.literal("result"),
  /** `success`, or an error subtype. */
  subtype: z.string().min(1),
  is_error: z.boolean().optional(),
  result: z.string().optional(),
  session_id: z.string().min(1).optional(),
});

/** Cursor's own error line: `{ type: "error", message }` or `{ type: "error", error: { message } }`. */
export const cursorErrorLineSchema = z.looseObject({
  type: z.string(),
  message: z.string().optional(),
  error: z.union([z.string(), z.looseObject({ message: z.string().optional() })]).optional(),
});

export type CursorAssistantLine = z.infer<typeof cursorAssistantLineSchema>;
export type CursorToolCallLine = z.infer<typeof cursorToolCallLineSchema>;
export type CursorResultLine = z.infer<typeof cursorResultLineSchema>;

/** One stdout line, classified. */
export type CursorStreamLine =
  | { kind: "system-init"; line: z.infer<typeof cursorSystemInitSchema> }
  | { kind: "assistant"; line: CursorAssistantLine }
  | { kind: "tool-call"; line: CursorToolCallLine }
  | { kind: "result"; line: CursorResultLine }
  | { kind: "error"; message: string }
  /** JSON, but of a type the adapter does not read (user echo, thinking, …). */
  | { kind: "unknown"; lineType: string }
  /** Not a JSON object with a string `type`. */
  | { kind: "not-json" }
  /** A known type without the fields the adapter relies on. */
  | { kind: "invalid"; lineType: string; issues: string };

/** Classifies and validates one stdout line of `cursor-agent -p --output-format stream-json`. */
export function classifyCursorStreamLine(text: string): CursorStreamLine {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { kind: "not-json" };
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return { kind: "not-json" };
  const { type, subtype } = value as { type?: unknown; subtype?: unknown };
  if (typeof type !== "string") return { kind: "not-json" };
  switch (type.toLowerCase()) {
    case "system":
      if (subtype !== "init") return { kind: "unknown", lineType: `system/${String(subtype)}` };
      return check(type, cursorSystemInitSchema, value, (line) => ({ kind: "system-init", line }));
    case "assistant":
      return check(type, cursorAssistantLineSchema, value, (line) => ({ kind: "assistant", line }));
    case "tool_call":
      return check(type, cursorToolCallLineSchema, value, (line) => ({ kind: "tool-call", line }));
    case "result":
      return check(type, cursorResultLineSchema, value, (line) => ({ kind: "result", line }));
    case "error":
      return check(type, cursorErrorLineSchema, value, (line) => ({ kind: "error", message: errorMessage(line) }));
    default:
      return { kind: "unknown", lineType: type };
  }
}

function errorMessage(line: z.infer<typeof cursorErrorLineSchema>): string {
  if (typeof line.error === "string" && line.error !== "") return line.error;
  if (typeof line.error === "object" && line.error.message) return line.error.message;
  return line.message || "cursor-agent reported an error";
}

function check<Schema extends z.ZodType>(
  lineType: string,
  schema: Schema,
  value: unknown,
  wrap: (line: z.infer<Schema>) => CursorStreamLine,
): CursorStreamLine {
  const parsed = schema.safeParse(value);
  if (parsed.success) return wrap(parsed.data);
  const issues = parsed.error.issues
    .slice(0, 5)
    .map((issue) => `${issue.path.length > 0 ? issue.path.join(".") : "(line)"}: ${issue.message}`)
    .join("; ");
  return { kind: "invalid", lineType, issues };
}
