import { z } from "zod";

/** A request's id on every hop (page port, native messaging, Core socket): the caller picks it, the answer echoes it. */
export const requestIdSchema = z.string().min(1).max(128);
