import { z } from "zod";

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
  /** JSON with an `event` the adapter does not read. */
  | { kind: "unknown"; lineType: string }
  /** Not a JSON object with a string `event` (banners, warnings, plain text). */
  | { kind: "not-json" }
  /** A known event without the fields the adapter relies on. */
  | { kind: "invalid"; lineType: string; issues: string };

/** Classifies and validates one stdout line of `agy -p … --output-format stream-json`. */
export function classifyAntigravityStreamLine(text: string): AntigravityStreamLine {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { kind: "not-json" };
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return { kind: "not-json" };
  const { event } = value as { event?: unknown };
  if (typeof event !== "string") return { kind: "not-json" };
  switch (event) {
    case "init":
      return check(event, antigravityInitLineSchema, value, (line) => ({ kind: "init", line }));
    case "step_update":
      return check(event, antigravityStepUpdateLineSchema, value, (line) => ({ kind: "step", step: line.step_update }));
    case "result":
      return check(event, antigravityResultLineSchema, value, (line) => ({ kind: "result", line }));
    default:
      return { kind: "unknown", lineType: event };
  }
}

function check<Schema extends z.ZodType>(
  lineType: string,
  schema: Schema,
  value: unknown,
  wrap: (line: z.infer<Schema>) => AntigravityStreamLine,
): AntigravityStreamLine {
  const parsed = schema.safeParse(value);
  if (parsed.success) return wrap(parsed.data);
  const issues = parsed.error.issues
    .slice(0, 5)
    .map((issue) => `${issue.path.length > 0 ? issue.path.join(".") : "(line)"}: ${issue.message}`)
    .join("; ");
  return { kind: "invalid", lineType, issues };
}

/** The text of an `error` field, which the CLI gives as a string or as `{ type, message }`. */
export function antigravityErrorText(error: string | { message?: string | undefined } | null | undefined): string {
  if (error === null || error === undefined) return "";
  return typeof error === "string" ? error : (error.message ?? "");
}
