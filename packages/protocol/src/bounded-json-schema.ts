import { z } from "zod";
import type { JsonValue } from "./domain.js";
import { JSON_VALUE_LIMITS, type JsonLimits } from "./json-limits.js";
import { limitRefinement } from "./wire-payload.js";

/**
 * Runs the limit check before `schema`, so a recursive schema (such as a tool's argsSchema) never sees input
 * deep enough to overflow the stack.
 */
export function withinJsonLimits<Output>(schema: z.ZodType<Output>, limits: Readonly<JsonLimits> = JSON_VALUE_LIMITS) {
  return z.unknown().superRefine(limitRefinement(limits)).pipe(schema);
}

/**
 * A JSON value a page or an agent supplies (a tool result), within MAX_JSON_DEPTH and MAX_JSON_NODES. The one
 * iterative walk both bounds and type-checks it, which is also far faster than a recursive union on big values.
 */
export const boundedJsonValueSchema = z.custom<JsonValue>().superRefine(limitRefinement(JSON_VALUE_LIMITS));
