import { z } from "zod";
import { checkStreamLine, readStreamLine } from "../stream-line.js";
import type { InvalidStreamLine, NotJsonStreamLine } from "../stream-line.js";

/*
 * The parts of `opencode run --format json` lines that the adapter reads. Every line is
 * `{"type", "timestamp", "sessionID", ...data}`. Lenient on purpose: extra fields and unknown line types pass, so a
 * newer CLI keeps working; a known type that lacks the fields we rely on is rejected.
 */

const sessionIdSchema = z.string().min(1);

export const opencodeStepStartLineSchema = z.looseObject({
  type: z.literal("step_start"),
  sessionID: sessionIdSchema,
  part: z.looseObject({ type: z.literal("step-start") }),
});

/** Emitted once a text part is finished: its whole text, never a delta. */
export const opencodeTextLineSchema = z.looseObject({
  type: z.literal("text"),
  sessionID: sessionIdSchema,
  part: z.looseObject({ id: z.string().min(1), type: z.literal("text"), text: z.string() }),
});

const toolStateSchema = z.union([
  z.looseObject({
    status: z.literal("completed"),
    input: z.record(z.string(), z.unknown()),
    output: z.string(),
    title: z.string().optional(),
    metadata: z.record(z.string(), z.unknown()).optional(),
  }),
  z.looseObject({ status: z.literal("error"), input: z.record(z.string(), z.unknown()), error: z.string() }),
]);

/** Emitted once a tool call has finished (completed or error); OpenCode prints nothing when it starts. */
export const opencodeToolUseLineSchema = z.looseObject({
  type: z.literal("tool_use"),
  sessionID: sessionIdSchema,
  part: z.looseObject({
    id: z.string().min(1),
    type: z.literal("tool"),
    callID: z.string().min(1).optional(),
    tool: z.string().min(1),
    state: toolStateSchema,
  }),
});

/** A token count, only read for the usage report: one of an unexpected shape is dropped instead of failing the line. */
const tokenCountSchema = z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER).optional().catch(undefined);
/**
 * The tokens of one step (one model request), as OpenCode 1.18.33 splits them: `input` without the cache reads and
 * writes, `output` without the reasoning, `total` the provider's own total.
 */
export const opencodeStepTokensSchema = z
  .object({
    total: tokenCountSchema,
    input: tokenCountSchema,
    output: tokenCountSchema,
    reasoning: tokenCountSchema,
    cache: z.object({ read: tokenCountSchema, write: tokenCountSchema }).optional().catch(undefined),
  })
  .optional()
  .catch(undefined);
export type OpencodeStepTokens = NonNullable<z.infer<typeof opencodeStepTokensSchema>>;

/** The end of one model step; `reason` is "tool-calls" when the model goes on after its tools ran. */
export const opencodeStepFinishLineSchema = z.looseObject({
  type: z.literal("step_finish"),
  sessionID: sessionIdSchema,
  part: z.looseObject({ type: z.literal("step-finish"), reason: z.string().optional(), tokens: opencodeStepTokensSchema }),
});

/**
 * A session error: `{name, data: {message, …}}` (ProviderAuthError, APIError, UnknownError, …), or a bare string. An
 * APIError carries the HTTP status (`statusCode`, absent when no answer came) and whether OpenCode deemed it worth
 * retrying (`isRetryable`; by the time the line is printed its retries are spent). OpenCode retries silently: its
 * `run --format json` prints no event per retry.
 */
export const opencodeErrorLineSchema = z.looseObject({
  type: z.literal("error"),
  sessionID: sessionIdSchema.optional(),
  error: z.union([
    z.string(),
    z.looseObject({
      name: z.string().optional(),
      message: z.string().optional(),
      data: z
        .looseObject({
          message: z.string().optional(),
          statusCode: z.number().optional(),
          isRetryable: z.boolean().nullish().catch(null),
          providerID: z.string().optional(),
        })
        .optional(),
    }),
  ]),
});

/** The turn is over: the session went idle. `rejected` names permissions that were asked for and refused. */
export const opencodeDoneLineSchema = z.looseObject({
  type: z.literal("done"),
  sessionID: sessionIdSchema,
  reason: z.string(),
  rejected: z.array(z.string()).optional(),
});

export type OpencodeTextLine = z.infer<typeof opencodeTextLineSchema>;
export type OpencodeToolUseLine = z.infer<typeof opencodeToolUseLineSchema>;
export type OpencodeStepFinishLine = z.infer<typeof opencodeStepFinishLineSchema>;
export type OpencodeErrorLine = z.infer<typeof opencodeErrorLineSchema>;
export type OpencodeDoneLine = z.infer<typeof opencodeDoneLineSchema>;

/** One stdout line, classified. */
export type OpencodeStreamLine =
  | { kind: "step-start"; line: z.infer<typeof opencodeStepStartLineSchema> }
  | { kind: "text"; line: OpencodeTextLine }
  | { kind: "tool-use"; line: OpencodeToolUseLine }
  | { kind: "step-finish"; line: OpencodeStepFinishLine }
  | { kind: "error"; line: OpencodeErrorLine }
  | { kind: "done"; line: OpencodeDoneLine }
  /** JSON of a type the adapter does not read (reasoning, …); its session id is still taken. */
  | { kind: "unknown"; lineType: string; sessionID: string | null }
  | NotJsonStreamLine
  | InvalidStreamLine;

/** Classifies and validates one stdout line of `opencode run --format json`. */
export function classifyOpencodeStreamLine(text: string): OpencodeStreamLine {
  const read = readStreamLine(text, "type");
  if (read === null) return { kind: "not-json" };
  switch (read.lineType) {
    case "step_start":
      return checkStreamLine(read, opencodeStepStartLineSchema, (line) => ({ kind: "step-start", line }));
    case "text":
      return checkStreamLine(read, opencodeTextLineSchema, (line) => ({ kind: "text", line }));
    case "tool_use":
      return checkStreamLine(read, opencodeToolUseLineSchema, (line) => ({ kind: "tool-use", line }));
    case "step_finish":
      return checkStreamLine(read, opencodeStepFinishLineSchema, (line) => ({ kind: "step-finish", line }));
    case "error":
      return checkStreamLine(read, opencodeErrorLineSchema, (line) => ({ kind: "error", line }));
    case "done":
      return checkStreamLine(read, opencodeDoneLineSchema, (line) => ({ kind: "done", line }));
    default:
      return {
        kind: "unknown",
        lineType: read.lineType,
        sessionID: typeof read.value.sessionID === "string" && read.value.sessionID !== "" ? read.value.sessionID : null,
      };
  }
}
