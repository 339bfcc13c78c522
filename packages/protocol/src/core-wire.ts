import { z } from "zod";
import { wirePayloadSchema } from "./bounded-json-schema.js";
import { wireErrorSchema } from "./wire-error.js";
import { sessionEventEnvelopeSchema } from "./session-events.js";
import { pageOriginSchema } from "./origin.js";
import { requestIdSchema } from "./page-wire.js";
import { fullAccessAttestationSchema } from "./full-access.js";
import { runOutputFrameSchema } from "./script-run.js";
import { MAX_CORE_FRAME_BYTES } from "./core-frame-limit.js";

export { MAX_CORE_FRAME_BYTES };

/** Client (native host, pedelec-cli, pedelec) → Core. */
export const coreRequestFrameSchema = z.strictObject({
  kind: z.literal("request"),
  id: requestIdSchema,
  type: z.string().min(1).max(64),
  /** The page origin the extension stamped; present exactly for requests that came from a page. */
  origin: pageOriginSchema.optional(),
  /** Bounded before any recursive schema sees it (MAX_WIRE_JSON_DEPTH, MAX_JSON_NODES). */
  payload: wirePayloadSchema,
  /** The native host's signed statement admitting this one request to Full Access. */
  attestation: fullAccessAttestationSchema.optional(),
});
export type CoreRequestFrame = z.infer<typeof coreRequestFrameSchema>;

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
