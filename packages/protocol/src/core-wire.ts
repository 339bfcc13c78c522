import { z } from "zod";
import { wireErrorSchema } from "./wire-error.js";
import { sessionEventEnvelopeSchema } from "./session-events.js";
import { requestIdSchema } from "./request-id.js";
import { coreRequestFrameSchema, type CoreRequestFrame } from "./core-request-frame.js";
import { runOutputFrameSchema } from "./script-run.js";
import { MAX_CORE_FRAME_BYTES } from "./core-frame-limit.js";

export { MAX_CORE_FRAME_BYTES };

export { coreRequestFrameSchema, type CoreRequestFrame };

export const coreResponseFrameSchema = z.discriminatedUnion("ok", [
  z.object({ kind: z.literal("response"), id: requestIdSchema, ok: z.literal(true), result: z.unknown() }),
  z.object({ kind: z.literal("response"), id: requestIdSchema, ok: z.literal(false), error: wireErrorSchema }),
]);
export type CoreResponseFrame = z.infer<typeof coreResponseFrameSchema>;

export const coreEventFrameSchema = z.object({ kind: z.literal("event"), envelope: sessionEventEnvelopeSchema });
export type CoreEventFrame = z.infer<typeof coreEventFrameSchema>;

/** Sent right before Core closes a connection it cannot continue (a malformed or oversized frame). */
export const coreFatalFrameSchema = z.object({ kind: z.literal("fatal"), error: wireErrorSchema });
export type CoreFatalFrame = z.infer<typeof coreFatalFrameSchema>;

/** Core → client. Picked by `kind`, so an event is checked once against the event schema and nothing else. */
export const coreServerFrameSchema = z.discriminatedUnion("kind", [
  coreResponseFrameSchema,
  coreEventFrameSchema,
  coreFatalFrameSchema,
  runOutputFrameSchema,
]);
export type CoreServerFrame = z.infer<typeof coreServerFrameSchema>;
