import { z } from "zod";
import type { JsonValue } from "./domain.js";
import { checkJsonLimits, JSON_VALUE_LIMITS, WIRE_PAYLOAD_LIMITS, type JsonLimits } from "./json-limits.js";

/** A zod refinement that runs the iterative limit check; the issue names where it stopped, never the value. */
function limitRefinement(limits: Readonly<JsonLimits>) {
  return (value: unknown, context: z.RefinementCtx): void => {
    const check = checkJsonLimits(value, limits);
    if (!check.ok) context.addIssue({ code: "custom", message: check.message, path: check.path });
  };
}

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

const wireRefinement = limitRefinement(WIRE_PAYLOAD_LIMITS);

/**
 * A request payload as it arrives on a wire: JSON within MAX_WIRE_JSON_DEPTH and MAX_JSON_NODES. A missing
 * payload is left to the request's own schema to report.
 */
export const wirePayloadSchema = z.unknown().superRefine((value, context) => {
  if (value !== undefined) wireRefinement(value, context);
});
