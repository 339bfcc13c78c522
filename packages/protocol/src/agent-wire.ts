import { z } from "zod";
import { activitySchema } from "./session-events.js";
import { wireErrorSchema } from "./wire-error.js";

/**
 * What `pedelec-agent` (Pedelec's own agent for Ollama-compatible endpoints) prints on stdout, one JSON object per
 * line, and Core's ollama adapter reads: the same normalized vocabulary as every provider's parser produces.
 */
export const agentEventSchema = z.discriminatedUnion("type", [
  /** First line of every turn: the stored conversation this turn continues (resumed) or starts. */
  z.strictObject({ type: z.literal("conversation-started"), conversationId: z.string().regex(/^[A-Za-z0-9_-]{8,128}$/), resumed: z.boolean() }),
  z.strictObject({ type: z.literal("text-delta"), messageId: z.string().min(1).max(128), delta: z.string() }),
  z.strictObject({ type: z.literal("message-completed"), messageId: z.string().min(1).max(128), text: z.string() }),
  /** A tool the model called (a page tool, a workspace file tool, a script run): started, then completed or failed. */
  z.strictObject({ type: z.literal("activity"), activity: activitySchema }),
  z.strictObject({
    type: z.literal("turn-completed"),
    /** Model requests the turn made (one per round of tool calls, plus the final answer). */
    rounds: z.number().int().min(1),
    usage: z.strictObject({ promptTokens: z.number().int().min(0), outputTokens: z.number().int().min(0) }).optional(),
  }),
  /** The turn failed; the agent exits non-zero after it. `conversationLost`: the conversation to resume is gone. */
  z.strictObject({ type: z.literal("turn-failed"), error: wireErrorSchema, conversationLost: z.boolean().optional() }),
]);
export type AgentEvent = z.infer<typeof agentEventSchema>;

/** The environment variable that carries the endpoint's API key to `pedelec-agent` (never argv, never logged). */
export const AGENT_API_KEY_ENV = "PEDELEC_OLLAMA_API_KEY";

/** The most model requests one turn may make before it fails with AGENT_TOOL_ROUNDS_EXCEEDED. */
export const DEFAULT_AGENT_MAX_TOOL_ROUNDS = 24;

/**
 * The levels Ollama's `think` takes besides on and off (for the models that have levels, such as gpt-oss), and so
 * the explicit efforts the ollama provider has: `pedelec-agent run --think <level>`.
 */
export const OLLAMA_THINK_LEVELS = ["low", "medium", "high"] as const;
export type OllamaThinkLevel = (typeof OLLAMA_THINK_LEVELS)[number];
