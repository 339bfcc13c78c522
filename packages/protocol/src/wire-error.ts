import { z } from "zod";
import { ERROR_CODES, type ErrorCode } from "./error-codes.js";

/**
 * An error as it travels on every wire: a catalogue code, a human message, optional details. Kept apart from
 * PedelecError so code that only throws and reads errors (the agent's commands) never loads the schema library.
 */
export const wireErrorSchema = z.object({
  code: z.enum(ERROR_CODES),
  message: z.string(),
  details: z.unknown().optional(),
});

/** A PedelecError as plain JSON, the form it takes on every wire (`PedelecError.toWire()` / `fromWire()`). */
export interface WireError {
  /** The catalogue code (see docs/errors.md). */
  code: ErrorCode;
  /** A sentence for people; its wording may change, so decide by `code`. */
  message: string;
  /** Facts about the failure that a program can use (a path, a limit, the cause), when there are any. */
  details?: unknown;
}

// The interface above is what the schema checks, in both directions.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const wireErrorMatchesSchema: Same<WireError, z.infer<typeof wireErrorSchema>> = true;
void wireErrorMatchesSchema;
