import { z } from "zod";
import {
  accessModeSchema,
  effortLevelSchema,
  explicitEffortSchema,
  providerCodeSchema,
  sessionIdSchema,
  sessionStatusSchema,
  toolRequestIdSchema,
  turnIdSchema,
  turnKindSchema,
} from "./domain.js";
import { boundedJsonValueSchema } from "./bounded-json-schema.js";
import { MAX_TOOL_ARGS_JSON_LENGTH } from "./json-limits.js";
import { THREAD_CAPABILITY_ENV, THREAD_CAPABILITY_PATTERN, THREAD_CAPABILITY_RULE } from "./thread-access.js";
import { wireErrorSchema } from "./wire-error.js";
import { pendingToolCallSchema } from "./session-events.js";
import { assetRequestSchemas } from "./assets.js";
import { workspaceListingRequestSchemas } from "./workspace-listing.js";
import { runIdSchema, scriptRunResultSchema, scriptRunSpecShape, withOneEntry } from "./script-run.js";
import { skillsManifestSchema, toolManifestEntrySchema, toolNameSchema } from "./tool-schema.js";
import { tokenUsageSchema } from "./token-usage.js";
import { coreLifecycleRequestSchemas } from "./core-lifecycle-requests.js";

/** Largest user message accepted by sendText (characters). */
export const MAX_TEXT_LENGTH = 1_000_000;

export const createSessionInputSchema = z
  .strictObject({
    provider: providerCodeSchema.optional(),
    effortLevel: effortLevelSchema.optional(),
    model: z.string().min(1).max(200).optional(),
    effort: explicitEffortSchema.optional(),
    skills: skillsManifestSchema.optional(),
    workspace: z.strictObject({ path: z.string().min(1).max(4096) }).optional(),
    access: accessModeSchema.optional(),
    autoEndOnDisconnect: z.boolean().optional(),
  })
  .refine((input) => input.model === undefined || input.provider !== undefined, {
    message: "model needs an explicit provider",
    path: ["model"],
  })
  .refine((input) => input.effort === undefined || input.model !== undefined, { message: "effort requires model", path: ["effort"] })
  .refine((input) => input.effort === undefined || input.effortLevel === undefined, {
    message: "effortLevel cannot be combined with effort: an effort profile and an explicit effort both set the provider's effort",
    path: ["effortLevel"],
  });
export type CreateSessionInput = z.infer<typeof createSessionInputSchema>;

/** What Core reports about a session on create and resume. */
export const sessionInfoSchema = z.object({
  sessionId: sessionIdSchema,
  provider: providerCodeSchema,
  /** The effort profile the session runs with; null when it runs with an explicit `effort` instead. */
  effortLevel: effortLevelSchema.nullable(),
  /**
   * The explicit effort Core applied, null for a session on an effort profile. Absent from a Core older than explicit
   * effort: a page that asked for one refuses such a Core (PROTOCOL_VERSION_MISMATCH), since it did not apply it.
   */
  effort: explicitEffortSchema.nullable().optional(),
  model: z.string().nullable(),
  sessionCreatedAt: z.string(),
  status: sessionStatusSchema,
  workspace: z.object({ path: z.string(), managed: z.boolean() }),
  access: accessModeSchema,
  autoEndOnDisconnect: z.boolean(),
  toolNames: z.array(z.string()),
  /** The seq of the newest event so far; a resumer ignores anything not newer. */
  lastSeq: z.number().int().min(0),
  /** The turn running now, if any: a page that resumes mid-turn follows it to its end. */
  activeTurn: z.object({ turnId: turnIdSchema, turnKind: turnKindSchema }).nullable(),
  /**
   * Tool calls still waiting for a page's result, as they were requested: a page that resumes after a reload (even
   * without `afterSeq`) claims and runs them.
   */
  pendingToolCalls: z.array(pendingToolCallSchema),
  /**
   * The tokens the session used so far, over all its turns (the `sessionUsage` of its newest `usage-updated` event), so
   * a page that resumes shows it at once. `{}` before any report; absent from a Core older than usage reporting.
   */
  usage: tokenUsageSchema.optional(),
});
export type SessionInfo = z.infer<typeof sessionInfoSchema>;

const sessionRef = z.strictObject({ sessionId: sessionIdSchema });
/**
 * Resuming or re-subscribing: with `afterSeq`, Core first sends the connection every kept event newer than it, in order,
 * then the live ones.
 */
const resumeRef = z.strictObject({ sessionId: sessionIdSchema, afterSeq: z.number().int().min(0).optional() });

/**
 * Which page route claims or answers a tool call. The extension sets it from the port the request came on (a page
 * cannot choose it), so of several tabs following a session exactly one runs each call.
 */
export const toolClaimantSchema = z.string().min(1).max(128);

/** One provider as `listProviders()` reports it. */
export const providerStatusSchema = z.object({
  code: providerCodeSchema,
  name: z.string(),
  available: z.boolean(),
  /** A sentence the user can act on when unavailable ("not installed", "… not signed in — run `codex login`"). */
  error: z.string().nullable(),
});
export type ProviderStatus = z.infer<typeof providerStatusSchema>;

/** The settings a page may read: defaults only, never keys or paths. */
export const publicSettingsSchema = z.object({
  defaultProvider: providerCodeSchema.nullable(),
  defaultEffortLevel: effortLevelSchema,
  defaultModels: z.partialRecord(providerCodeSchema, z.string()),
});
export type PublicSettings = z.infer<typeof publicSettingsSchema>;

export const toolResultOutcomeSchema = z.discriminatedUnion("ok", [
  z.strictObject({ ok: z.literal(true), result: boundedJsonValueSchema }),
  z.strictObject({ ok: z.literal(false), error: wireErrorSchema }),
]);
export type ToolResultOutcome = z.infer<typeof toolResultOutcomeSchema>;

/**
 * Requests that a page makes and Core serves (the extension forwards them with the caller's origin).
 * Each has a payload schema and a result schema; both ends validate.
 */
export const sessionRequestSchemas = {
  createSession: { payload: createSessionInputSchema, result: sessionInfoSchema },
  resumeSession: { payload: resumeRef, result: sessionInfoSchema },
  sendText: {
    payload: z.strictObject({
      sessionId: sessionIdSchema,
      turnId: turnIdSchema,
      text: z.string().min(1).max(MAX_TEXT_LENGTH),
    }),
    result: z.object({ turnId: turnIdSchema }),
  },
  /**
   * Takes a requested tool call for one page before its handler runs. `claimed: false`: another page has it (should that
   * page go away unanswered, Core requests the call again). A call no longer waiting → TOOL_CALL_NOT_PENDING or
   * TOOL_TIMEOUT.
   */
  claimToolCall: {
    payload: z.strictObject({ sessionId: sessionIdSchema, toolRequestId: toolRequestIdSchema, claimant: toolClaimantSchema }),
    result: z.object({ claimed: z.boolean() }),
  },
  /**
   * Applied once: a result for a call that timed out → TOOL_TIMEOUT, one already answered, cancelled or unknown →
   * TOOL_CALL_NOT_PENDING, one another page claimed → TOOL_CALL_CLAIMED.
   */
  submitToolResult: {
    payload: z.strictObject({
      sessionId: sessionIdSchema,
      toolRequestId: toolRequestIdSchema,
      outcome: toolResultOutcomeSchema,
      claimant: toolClaimantSchema.optional(),
    }),
    result: z.object({ accepted: z.literal(true) }),
  },
  cancelTurn: { payload: sessionRef, result: z.object({ cancelled: z.boolean() }) },
  /** `reason` is the extension's to give ("disconnected" when it ends a session its last page left); pages cannot. */
  endSession: {
    payload: z.strictObject({ sessionId: sessionIdSchema, reason: z.enum(["requested", "disconnected"]).optional() }),
    result: z.object({ ended: z.boolean() }),
  },
  /**
   * Runs the session's first prompt (guidance and tool index) as a hidden "prepare" turn, so the first real message
   * starts warm. `turnId: null`: nothing to prepare (the conversation exists, or the provider starts afresh each turn).
   */
  prepareSession: {
    payload: z.strictObject({ sessionId: sessionIdSchema, turnId: turnIdSchema }),
    result: z.object({ turnId: turnIdSchema.nullable() }),
  },
  /** Subscribes the calling connection to a session's events (used when a route reconnects). */
  subscribeSession: { payload: resumeRef, result: z.object({ lastSeq: z.number().int().min(0) }) },
  /** Which providers this machine can run, and why the others cannot. */
  listProviders: { payload: z.strictObject({}), result: z.array(providerStatusSchema) },
  /** The user's defaults; never a secret. */
  getSettings: { payload: z.strictObject({}), result: publicSettingsSchema },
  /** `session.workspace.run()`: one script in the session's workspace; Full Access only with the native host's attestation. */
  runWorkspaceScript: {
    payload: withOneEntry(
      z.strictObject({ sessionId: sessionIdSchema, runId: runIdSchema, access: accessModeSchema.optional(), ...scriptRunSpecShape }),
    ),
    result: scriptRunResultSchema,
  },
  ...assetRequestSchemas,
  ...workspaceListingRequestSchemas,
  /** Stops a run started by runWorkspaceScript (its request then fails with DENO_CANCELLED). */
  cancelWorkspaceRun: {
    payload: z.strictObject({ sessionId: sessionIdSchema, runId: runIdSchema }),
    result: z.object({ cancelled: z.boolean() }),
  },
} as const;
export type SessionRequestType = keyof typeof sessionRequestSchemas;
export const SESSION_REQUEST_TYPES = Object.keys(sessionRequestSchemas) as SessionRequestType[];

export { MAX_TOOL_ARGS_JSON_LENGTH, THREAD_CAPABILITY_ENV };

/**
 * The secret Core gives only to one session's provider processes (in their environment, as
 * `PEDELEC_THREAD_CAPABILITY`); agent-facing commands present it with the thread id, which alone reaches nothing.
 */
export const threadCapabilitySchema = z.string().regex(THREAD_CAPABILITY_PATTERN, THREAD_CAPABILITY_RULE);

/** Requests only local programs make (the agent's pedelec-cli, the pedelec command). Never forwarded from a page. */
export const localRequestSchemas = {
  /** Every tool of the thread with its schema: Pedelec's own agent gives them to the model as native tools. */
  toolList: {
    payload: z.strictObject({ threadId: sessionIdSchema, capability: threadCapabilitySchema }),
    result: z.array(toolManifestEntrySchema.extend({ timeoutMs: z.number().int().positive() })),
  },
  toolSpec: {
    payload: z.strictObject({ threadId: sessionIdSchema, capability: threadCapabilitySchema, toolName: toolNameSchema }),
    result: toolManifestEntrySchema.extend({ timeoutMs: z.number().int().positive() }),
  },
  toolCall: {
    payload: z.strictObject({
      threadId: sessionIdSchema,
      capability: threadCapabilitySchema,
      toolName: toolNameSchema,
      /** The raw JSON text the agent passed, parsed and validated by Core. */
      argsJson: z.string().max(MAX_TOOL_ARGS_JSON_LENGTH),
    }),
    result: z.object({ result: boundedJsonValueSchema }),
  },
  /**
   * `pedelec-ts-runtime run`: one script in the thread's workspace, with the thread's access. Its output arrives as
   * `run-output` frames while it runs; the result carries everything but the output itself.
   */
  runScript: {
    payload: withOneEntry(z.strictObject({ threadId: sessionIdSchema, capability: threadCapabilitySchema, ...scriptRunSpecShape })),
    result: scriptRunResultSchema.omit({ stdout: true, stderr: true }),
  },
  ...coreLifecycleRequestSchemas,
} as const;
export type LocalRequestType = keyof typeof localRequestSchemas;

/**
 * Requests only the extension itself makes (never a page), stamped with the origin they concern. They can only take
 * rights away, so they need no attestation.
 */
export const extensionToCoreRequestSchemas = {
  /** The user revoked Full Access (or approval) for the origin: its Full Access runs and sessions stop now. */
  revokeFullAccess: {
    payload: z.strictObject({ revokedAt: z.number().int().min(0) }),
    result: z.object({ stoppedRuns: z.number().int().min(0), endedSessions: z.number().int().min(0) }),
  },
  /** A page route closed: the tool calls it claimed and did not answer are requested again for the other pages. */
  releaseToolClaims: {
    payload: z.strictObject({ claimant: toolClaimantSchema }),
    result: z.object({ released: z.number().int().min(0) }),
  },
} as const;
export type ExtensionToCoreRequestType = keyof typeof extensionToCoreRequestSchemas;
export const EXTENSION_TO_CORE_REQUEST_TYPES = Object.keys(extensionToCoreRequestSchemas) as ExtensionToCoreRequestType[];

export const coreRequestSchemas = { ...sessionRequestSchemas, ...extensionToCoreRequestSchemas, ...localRequestSchemas } as const;
export type CoreRequestType = keyof typeof coreRequestSchemas;
export type RequestPayload<T extends CoreRequestType> = z.input<(typeof coreRequestSchemas)[T]["payload"]>;
export type RequestResult<T extends CoreRequestType> = z.infer<(typeof coreRequestSchemas)[T]["result"]>;

export function isSessionRequestType(type: string): type is SessionRequestType {
  return Object.hasOwn(sessionRequestSchemas, type);
}
export function isExtensionToCoreRequestType(type: string): type is ExtensionToCoreRequestType {
  return Object.hasOwn(extensionToCoreRequestSchemas, type);
}
export function isCoreRequestType(type: string): type is CoreRequestType {
  return Object.hasOwn(coreRequestSchemas, type);
}
