import { z } from "zod";
import { wirePayloadSchema } from "./wire-payload.js";
import { sessionRequestSchemas } from "./requests.js";
import { wireErrorSchema } from "./wire-error.js";
import { sessionEventEnvelopeSchema } from "./session-events.js";
import { sessionIdSchema } from "./domain.js";
import { requestIdSchema } from "./request-id.js";

/** The name SDK ports use when they connect to the extension. */
export const SDK_PORT_NAME = "pedelec-sdk";

/** Requests the extension answers itself, without Core. */
export const extensionRequestSchemas = {
  getApprovalStatus: {
    payload: z.strictObject({}),
    result: z.object({
      installed: z.literal(true),
      approved: z.boolean(),
      origin: z.string(),
      /** Whether the extension holds a live connection to the desktop runtime. */
      appConnected: z.boolean(),
      /**
       * Whether the native host had to start the desktop runtime (it was not running) the last time it connected or
       * tried to, for the extension's current link; false when it found one running or has not tried.
       */
      appLaunched: z.boolean(),
    }),
  },
} as const;
export type ExtensionRequestType = keyof typeof extensionRequestSchemas;

export const pageRequestSchemas = {
  ...extensionRequestSchemas,
  createSession: sessionRequestSchemas.createSession,
  resumeSession: sessionRequestSchemas.resumeSession,
  sendText: sessionRequestSchemas.sendText,
  /** The extension adds the claimant (the page's route) before forwarding. */
  claimToolCall: {
    payload: sessionRequestSchemas.claimToolCall.payload.omit({ claimant: true }),
    result: sessionRequestSchemas.claimToolCall.result,
  },
  submitToolResult: {
    payload: sessionRequestSchemas.submitToolResult.payload.omit({ claimant: true }),
    result: sessionRequestSchemas.submitToolResult.result,
  },
  cancelTurn: sessionRequestSchemas.cancelTurn,
  endSession: { payload: z.strictObject({ sessionId: sessionIdSchema }), result: sessionRequestSchemas.endSession.result },
  prepareSession: sessionRequestSchemas.prepareSession,
  listProviders: sessionRequestSchemas.listProviders,
  getSettings: sessionRequestSchemas.getSettings,
  runWorkspaceScript: sessionRequestSchemas.runWorkspaceScript,
  cancelWorkspaceRun: sessionRequestSchemas.cancelWorkspaceRun,
  prepareAssetUpload: sessionRequestSchemas.prepareAssetUpload,
  prepareAssetDownload: sessionRequestSchemas.prepareAssetDownload,
  listAssets: sessionRequestSchemas.listAssets,
} as const;
export type PageRequestType = keyof typeof pageRequestSchemas;
export type PageRequestPayload<T extends PageRequestType> = z.input<(typeof pageRequestSchemas)[T]["payload"]>;
export type PageRequestResult<T extends PageRequestType> = z.infer<(typeof pageRequestSchemas)[T]["result"]>;

export function isPageRequestType(type: string): type is PageRequestType {
  return Object.hasOwn(pageRequestSchemas, type);
}

export { requestIdSchema };

/** Page → extension. */
export const pageRequestSchema = z.strictObject({
  id: requestIdSchema,
  type: z.string().min(1).max(64),
  /** Bounded before any recursive schema sees it (MAX_WIRE_JSON_DEPTH, MAX_JSON_NODES). */
  payload: wirePayloadSchema,
});
export type PageRequest = z.infer<typeof pageRequestSchema>;

/** Extension → page: the answer to one request. */
export const pageResponseSchema = z.union([
  z.object({ id: requestIdSchema, ok: z.literal(true), result: z.unknown() }),
  z.object({ id: requestIdSchema, ok: z.literal(false), error: wireErrorSchema }),
]);
export type PageResponse = z.infer<typeof pageResponseSchema>;

/**
 * Extension → page: a request is waiting on something outside the bridge (the user's approval), so the SDK
 * pauses its bridge timeout until the stage is settled.
 */
export const pageRequestProgressSchema = z.object({
  type: z.literal("request-progress"),
  id: requestIdSchema,
  stage: z.enum(["awaiting-approval", "approval-settled"]),
});
export type PageRequestProgress = z.infer<typeof pageRequestProgressSchema>;

/**
 * Extension → page: the link to the desktop runtime broke (the native host or Core went away), so events of this
 * session may have been lost; an active turn ends with `error` instead of waiting for an answer that cannot come.
 */
export const pageSessionInterruptedSchema = z.object({
  type: z.literal("session-interrupted"),
  sessionId: sessionIdSchema,
  error: wireErrorSchema,
});
export type PageSessionInterrupted = z.infer<typeof pageSessionInterruptedSchema>;

/** Every message the extension sends to a page. */
export const extensionToPageMessageSchema = z.union([
  sessionEventEnvelopeSchema,
  pageRequestProgressSchema,
  pageSessionInterruptedSchema,
  pageResponseSchema,
]);
export type ExtensionToPageMessage = z.infer<typeof extensionToPageMessageSchema>;
