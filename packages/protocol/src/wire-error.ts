import { z } from "zod";
import { ERROR_CODES } from "./error-codes.js";

/**
 * An error as it travels on every wire: a catalogue code, a human message, optional details. Kept apart from
 * PedelecError so code that only throws and reads errors (the agent's commands) never loads the schema library.
 */
export const wireErrorSchema = z.object({
  code: z.enum(ERROR_CODES),
  message: z.string(),
  details: z.unknown().optional(),
});
export type WireError = z.infer<typeof wireErrorSchema>;
