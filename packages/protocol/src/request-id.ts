import * as z from "./lean-zod.js";

/** A request's id on every hop (page port, native messaging, Core socket): the caller picks it, the answer echoes it. */
export const requestIdSchema = z.string().check(z.minLength(1), z.maxLength(128));
