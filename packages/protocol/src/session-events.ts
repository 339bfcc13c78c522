import { z } from "zod";
import { boundedJsonValueSchema } from "./bounded-json-schema.js";
import { sessionStatusSchema, turnIdSchema, turnKindSchema, toolRequestIdSchema, sessionIdSchema } from "./domain.js";
import { wireErrorSchema } from "./pedelec-error.js";

/** Normalized provider activity: what the agent is doing besides talking. */
export const activitySchema = z.object({
  /** Stable per activity within a turn, so a started activity can be matched with its completion. */
  id: z.string(),
  kind: z.enum(["command", "file-edit", "file-read", "web-search", "tool", "other"]),
  status: z.enum(["started", "completed", "failed"]),
  /** Short human text, e.g. the command line or the file path. */
  title: z.string(),
  /** Longer output or details, capped by Core. */
  detail: z.string().optional(),
});
export type Activity = z.infer<typeof activitySchema>;

export const toolCallOutcomeSchema = z.enum(["answered", "timed-out", "cancelled", "abandoned"]);

/**
 * Every event a session emits, one vocabulary (noun, then verb). Core stamps each with the session's `seq`.
 */
export const sessionEventSchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("status-changed"), status: sessionStatusSchema, turnId: turnIdSchema.optional() }),
  z.object({ type: z.literal("turn-started"), turnId: turnIdSchema, turnKind: turnKindSchema }),
  z.object({ type: z.literal("chat-delta"), turnId: turnIdSchema, messageId: z.string(), delta: z.string() }),
  z.object({ type: z.literal("chat-completed"), turnId: turnIdSchema, messageId: z.string(), text: z.string() }),
  z.object({ type: z.literal("activity-updated"), turnId: turnIdSchema, activity: activitySchema }),
  z.object({
    type: z.literal("tool-call-requested"),
    turnId: turnIdSchema,
    toolRequestId: toolRequestIdSchema,
    toolName: z.string(),
    /** Bounded like any JSON an agent supplies; one iterative walk, far quicker than z.json() on large values. */
    args: boundedJsonValueSchema,
    timeoutMs: z.number().int().positive(),
  }),
  z.object({
    type: z.literal("tool-call-settled"),
    turnId: turnIdSchema,
    toolRequestId: toolRequestIdSchema,
    outcome: toolCallOutcomeSchema,
  }),
  z.object({ type: z.literal("turn-completed"), turnId: turnIdSchema, turnKind: turnKindSchema }),
  z.object({ type: z.literal("turn-failed"), turnId: turnIdSchema, turnKind: turnKindSchema, error: wireErrorSchema }),
  z.object({ type: z.literal("error-reported"), error: wireErrorSchema, turnId: turnIdSchema.optional() }),
  z.object({ type: z.literal("session-ended"), reason: z.enum(["requested", "disconnected", "shutdown", "full-access-revoked"]) }),
]);
export type SessionEvent = z.infer<typeof sessionEventSchema>;
export type SessionEventType = SessionEvent["type"];
export type SessionEventOf<T extends SessionEventType> = Extract<SessionEvent, { type: T }>;

/** A session event with the fields every hop carries alongside it. */
export const sessionEventEnvelopeSchema = z.object({
  type: z.literal("event"),
  sessionId: sessionIdSchema,
  seq: z.number().int().positive(),
  /** ISO 8601 time at which Core emitted the event. */
  emittedAt: z.string(),
  event: sessionEventSchema,
});
export type SessionEventEnvelope = z.infer<typeof sessionEventEnvelopeSchema>;
