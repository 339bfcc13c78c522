import type { $RefinementCtx } from "zod/v4/core";
import { checkJsonLimits, WIRE_PAYLOAD_LIMITS, type JsonLimits } from "./json-limits.js";
import * as z from "./lean-zod.js";

/** A zod refinement that runs the iterative limit check; the issue names where it stopped, never the value. */
export function limitRefinement(limits: Readonly<JsonLimits>) {
  return (value: unknown, context: $RefinementCtx): void => {
    const check = checkJsonLimits(value, limits);
    if (!check.ok) context.addIssue({ code: "custom", message: check.message, path: check.path });
  };
}

const wireRefinement = limitRefinement(WIRE_PAYLOAD_LIMITS);

/**
 * A request payload as it arrives on a wire: JSON within MAX_WIRE_JSON_DEPTH and MAX_JSON_NODES. A missing
 * payload is left to the request's own schema to report.
 */
export const wirePayloadSchema = z.unknown().check(
  z.superRefine((value, context) => {
    if (value !== undefined) wireRefinement(value, context);
  }),
);
