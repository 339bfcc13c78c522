import { z } from "zod";
import { artifactSchema } from "./artifacts.js";
import { boundedJsonValueSchema } from "./bounded-json-schema.js";
import { sessionStatusSchema, turnIdSchema, turnKindSchema, toolRequestIdSchema, sessionIdSchema } from "./domain.js";
import { tokenUsageSchema } from "./token-usage.js";
import { wireErrorSchema } from "./wire-error.js";

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

const toolCallRequestShape = {
  turnId: turnIdSchema,
  toolRequestId: toolRequestIdSchema,
  toolName: z.string(),
  /** Bounded like any JSON an agent supplies; one iterative walk, far quicker than z.json() on large values. */
  args: boundedJsonValueSchema,
  timeoutMs: z.number().int().positive(),
};

/**
 * The agent called a page tool. The same call is requested again (same toolRequestId, a new seq) when the page that
 * claimed it went away without answering.
 */
const toolCallRequestedSchema = z.object({ type: z.literal("tool-call-requested"), ...toolCallRequestShape });

/** A tool call still waiting for a page, as `SessionInfo.pendingToolCalls` lists it. */
export const pendingToolCallSchema = z.object(toolCallRequestShape);
export type PendingToolCall = z.infer<typeof pendingToolCallSchema>;

export const toolCallOutcomeSchema = z.enum(["answered", "timed-out", "cancelled", "abandoned"]);

/**
 * Why a session ended: its page ended it, the extension ended it when its last page left (`autoEndOnDisconnect`), it
 * went unused longer than the retention setting, or the user revoked the Full Access it ran with.
 */
export const sessionEndReasonSchema = z.enum(["requested", "disconnected", "expired", "full-access-revoked"]);
export type SessionEndReason = z.infer<typeof sessionEndReasonSchema>;

/**
 * The tokens used changed: `usage` is the turn's so far (each update replaces the turn's previous one), `sessionUsage`
 * the session's running total over all its turns, also those before a Core restart. Neither ever goes down. Core joins
 * updates that follow each other within a display frame, so a provider that reports with every token sends a few.
 */
const usageUpdatedSchema = z.object({
  type: z.literal("usage-updated"),
  turnId: turnIdSchema,
  usage: tokenUsageSchema,
  sessionUsage: tokenUsageSchema,
});

/**
 * A file under the workspace's assets folder that is new or changed since the turn began, reported as the turn ends
 * (before its status change), one event per file, at most MAX_ARTIFACTS_PER_TURN a turn.
 */
const artifactCreatedSchema = z.object({ type: z.literal("artifact-created"), turnId: turnIdSchema, artifact: artifactSchema });

/**
 * Every event a session emits, one vocabulary (noun, then verb). Core stamps each with the session's `seq`.
 */
export const sessionEventSchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("status-changed"), status: sessionStatusSchema, turnId: turnIdSchema.optional() }),
  z.object({ type: z.literal("turn-started"), turnId: turnIdSchema, turnKind: turnKindSchema }),
  z.object({ type: z.literal("chat-delta"), turnId: turnIdSchema, messageId: z.string(), delta: z.string() }),
  z.object({ type: z.literal("chat-completed"), turnId: turnIdSchema, messageId: z.string(), text: z.string() }),
  z.object({ type: z.literal("activity-updated"), turnId: turnIdSchema, activity: activitySchema }),
  artifactCreatedSchema,
  usageUpdatedSchema,
  toolCallRequestedSchema,
  z.object({
    type: z.literal("tool-call-settled"),
    turnId: turnIdSchema,
    toolRequestId: toolRequestIdSchema,
    outcome: toolCallOutcomeSchema,
  }),
  z.object({ type: z.literal("turn-completed"), turnId: turnIdSchema, turnKind: turnKindSchema }),
  z.object({ type: z.literal("turn-failed"), turnId: turnIdSchema, turnKind: turnKindSchema, error: wireErrorSchema }),
  z.object({ type: z.literal("error-reported"), error: wireErrorSchema, turnId: turnIdSchema.optional() }),
  z.object({ type: z.literal("session-ended"), reason: sessionEndReasonSchema }),
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
