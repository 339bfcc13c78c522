import { z } from "zod";
import { checkStreamLine, readStreamLine } from "../stream-line.js";
import type { SetAsideStreamLine } from "../stream-line.js";

/*
 * The parts of the Antigravity CLI's `--output-format stream-json` lines that the adapter reads. Each line names
 * its kind in `event` (not `type`) and carries its payload under a key of the same name: `init`, `step_update`,
 * and the terminal `result`. Lenient on purpose: extra fields, unknown events and unknown step types pass, so a
 * newer CLI keeps working; a known event that lacks the fields we rely on is rejected.
 */

export const antigravityInitLineSchema = z.looseObject({
  event: z.literal("init"),
  conversation_id: z.string().min(1),
});

/** One tool call's description; `parameters` holds its arguments (CommandLine, AbsolutePath, TargetFile, …). */
export const antigravityToolInfoSchema = z.looseObject({
  name: z.string().optional(),
  parameters: z.record(z.string(), z.unknown()).nullish(),
});

export const antigravityStepSchema = z.looseObject({
  /** agent_response, user_input, tool, system_message, checkpoint, …; absent on a step's closing update. */
  step_type: z.string().optional(),
  step_index: z.number().int().nonnegative().optional(),
  /** ACTIVE while running, then DONE or ERROR. */
  state: z.string().optional(),
  conversation_id: z.string().optional(),
  text_delta: z.string().nullish(),
  tool_name: z.string().optional(),
  tool_info: antigravityToolInfoSchema.nullish(),
  output: z.string().nullish(),
  error: z.union([z.string(), z.looseObject({ message: z.string().optional() })]).nullish(),
});

export const antigravityStepUpdateLineSchema = z.looseObject({
  event: z.literal("step_update"),
  step_update: antigravityStepSchema,
});

export const antigravityResultLineSchema = z.looseObject({
  event: z.literal("result"),
  result: z.looseObject({
    /** SUCCESS; anything else (FAILED, ERROR, CANCELLED, TIMEOUT, …) is a failed turn. */
    status: z.string().min(1),
    conversation_id: z.string().min(1).optional(),
    response: z.string().nullish(),
    error: z.union([z.string(), z.looseObject({ message: z.string().optional() })]).nullish(),
  }),
});

export type AntigravityStep = z.infer<typeof antigravityStepSchema>;
export type AntigravityResultLine = z.infer<typeof antigravityResultLineSchema>;

/** One stdout line, classified. */
export type AntigravityStreamLine =
  | { kind: "init"; line: z.infer<typeof antigravityInitLineSchema> }
  | { kind: "step"; step: AntigravityStep }
  | { kind: "result"; line: AntigravityResultLine }
  /** Lines set aside: an `event` the adapter does not read, plain text (banners, warnings), an invalid event. */
  | SetAsideStreamLine;

/** Classifies and validates one stdout line of `agy -p … --output-format stream-json`. */
export function classifyAntigravityStreamLine(text: string): AntigravityStreamLine {
  const read = readStreamLine(text, "event");
  if (read === null) return { kind: "not-json" };
  switch (read.lineType) {
    case "init":
      return checkStreamLine(read, antigravityInitLineSchema, (line) => ({ kind: "init", line }));
    case "step_update":
      return checkStreamLine(read, antigravityStepUpdateLineSchema, (line) => ({ kind: "step", step: line.step_update }));
    case "result":
      return checkStreamLine(read, antigravityResultLineSchema, (line) => ({ kind: "result", line }));
    default:
      return { kind: "unknown", lineType: read.lineType };
  }
}

/** The text of an `error` field, which the CLI gives as a string or as `{ type, message }`. */
export function antigravityErrorText(error: string | { message?: string | undefined } | null | undefined): string {
  if (error === null || error === undefined) return "";
  return typeof error === "string" ? error : (error.message ?? "");
}
