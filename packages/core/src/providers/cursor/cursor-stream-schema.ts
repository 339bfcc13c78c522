import { z } from "zod";
import { checkStreamLine, readStreamLine } from "../stream-line.js";
import type { SetAsideStreamLine } from "../stream-line.js";

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
  /** Lines set aside, among them types the adapter does not read (user echo, thinking, …). */
  | SetAsideStreamLine;

/** Classifies and validates one stdout line of `cursor-agent -p --output-format stream-json`. */
export function classifyCursorStreamLine(text: string): CursorStreamLine {
  const read = readStreamLine(text, "type");
  if (read === null) return { kind: "not-json" };
  switch (read.lineType.toLowerCase()) {
    case "system":
      if (read.value.subtype !== "init") return { kind: "unknown", lineType: `system/${String(read.value.subtype)}` };
      return checkStreamLine(read, cursorSystemInitSchema, (line) => ({ kind: "system-init", line }));
    case "assistant":
      return checkStreamLine(read, cursorAssistantLineSchema, (line) => ({ kind: "assistant", line }));
    case "tool_call":
      return checkStreamLine(read, cursorToolCallLineSchema, (line) => ({ kind: "tool-call", line }));
    case "result":
      return checkStreamLine(read, cursorResultLineSchema, (line) => ({ kind: "result", line }));
    case "error":
      return checkStreamLine(read, cursorErrorLineSchema, (line) => ({ kind: "error", message: errorMessage(line) }));
    default:
      return { kind: "unknown", lineType: read.lineType };
  }
}

function errorMessage(line: z.infer<typeof cursorErrorLineSchema>): string {
  if (typeof line.error === "string" && line.error !== "") return line.error;
  if (typeof line.error === "object" && line.error.message) return line.error.message;
  return line.message || "cursor-agent reported an error";
}
