import { z } from "zod";
import { wirePayloadSchema } from "./wire-payload.js";
import { sessionRequestSchemas, type SessionRequestType } from "./requests.js";
import { wireErrorSchema } from "./wire-error.js";
import { sessionEventEnvelopeSchema } from "./session-events.js";
import { sessionIdSchema } from "./domain.js";
import { requestIdSchema } from "./request-id.js";
import { PROTOCOL_VERSION, UNSTATED_PROTOCOL_VERSION } from "./protocol-version.js";

/** What every SDK port's name starts with; a name of only this comes from an SDK older than the version handshake. */
export const SDK_PORT_NAME_PREFIX = "pedelec-sdk";

/**
 * The name SDK ports use when they connect to the extension: it states the SDK's protocol version
 * (`pedelec-sdk@1.0`), the first thing the extension learns of a page, so it can refuse an incompatible one at once.
 */
export const SDK_PORT_NAME = `${SDK_PORT_NAME_PREFIX}@${PROTOCOL_VERSION}`;

/**
 * The protocol version an SDK port's name states (UNSTATED_PROTOCOL_VERSION for the bare prefix), or undefined when the
 * name is not an SDK port's. The version is returned as written; whether it is compatible is the caller's check.
 */
export function sdkPortProtocolVersion(portName: string): string | undefined {
  if (portName === SDK_PORT_NAME_PREFIX) return UNSTATED_PROTOCOL_VERSION;
  if (!portName.startsWith(`${SDK_PORT_NAME_PREFIX}@`) || portName.length > SDK_PORT_NAME_PREFIX.length + 33) return undefined;
  return portName.slice(SDK_PORT_NAME_PREFIX.length + 1);
}

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

/**
 * How each session request reaches Core from a page: `true` as the page sends it, a mask of the fields the extension
 * sets from the page's port before forwarding (a page cannot choose them, so its payload must not carry them), or
 * `false` for a request only the extension makes. Keyed by the session request table, so a new session request does
 * not compile until it says whether pages make it.
 */
const PAGE_ACCESS = {
  createSession: true,
  resumeSession: true,
  sendText: true,
  /** The extension adds the claimant (the page's route) before forwarding. */
  claimToolCall: { claimant: true },
  submitToolResult: { claimant: true },
  cancelTurn: true,
  /** Only the extension ends a session for a reason ("disconnected"); a page's end is always "requested". */
  endSession: { reason: true },
  prepareSession: true,
  /** The extension subscribes a page's route itself when it reconnects. */
  subscribeSession: false,
  listProviders: true,
  getSettings: true,
  runWorkspaceScript: true,
  prepareAssetUpload: true,
  prepareAssetDownload: true,
  listAssets: true,
  listWorkspaceEntries: true,
  cancelWorkspaceRun: true,
} as const satisfies { readonly [T in SessionRequestType]: boolean | Readonly<Record<string, true>> };

type SessionSchemas = typeof sessionRequestSchemas;
type PageAccess = typeof PAGE_ACCESS;
type PageSessionRequestType = { [T in SessionRequestType]: PageAccess[T] extends false ? never : T }[SessionRequestType];
/** A payload schema without the fields the extension stamps (what zod's `omit` returns). */
type WithoutStamped<TSchema, TMask> =
  TSchema extends z.ZodObject<infer Shape, infer Config>
    ? z.ZodObject<z.core.util.Flatten<Omit<Shape, Extract<keyof Shape, keyof TMask>>>, Config>
    : never;
type PageSessionRequestSchemas = {
  readonly [T in PageSessionRequestType]: PageAccess[T] extends true
    ? SessionSchemas[T]
    : { readonly payload: WithoutStamped<SessionSchemas[T]["payload"], PageAccess[T]>; readonly result: SessionSchemas[T]["result"] };
};

/** The session requests a page makes, as PAGE_ACCESS derives them from the session request table. */
function pageSessionRequestSchemas(): PageSessionRequestSchemas {
  const schemas: Record<string, { payload: z.ZodType; result: z.ZodType }> = {};
  for (const [type, access] of Object.entries(PAGE_ACCESS) as [SessionRequestType, PageAccess[SessionRequestType]][]) {
    if (access === false) continue;
    const entry = sessionRequestSchemas[type];
    if (access === true) schemas[type] = entry;
    else schemas[type] = { payload: (entry.payload as z.ZodObject).omit(access), result: entry.result };
  }
  return schemas as PageSessionRequestSchemas;
}

/** Every request a page may send: the extension's own, and the session requests it forwards to Core. */
export const pageRequestSchemas = {
  ...extensionRequestSchemas,
  ...pageSessionRequestSchemas(),
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
