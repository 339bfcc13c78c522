import { z } from "zod";
import { wireErrorSchema } from "@pedelec/protocol/wire-error";

/**
 * Messages between the extension's own pages (the approval popup, the options page) and the service worker
 * (`chrome.runtime.sendMessage`). They never leave the extension, so they live here rather than in the page or
 * native wire. The approval requests below answer with a snapshot of the lists; the desktop link requests further
 * down answer with the link's state.
 */
export const popupRequestSchema = z.discriminatedUnion("type", [
  z.strictObject({ type: z.literal("list-approvals") }),
  z.strictObject({ type: z.literal("decide-approval"), origin: z.string().min(1), decision: z.enum(["approve", "reject"]) }),
  z.strictObject({
    type: z.literal("decide-workspace"),
    origin: z.string().min(1),
    path: z.string().min(1).max(4096),
    decision: z.enum(["allow", "deny"]),
  }),
  z.strictObject({ type: z.literal("revoke-origin"), origin: z.string().min(1) }),
  z.strictObject({ type: z.literal("revoke-folder"), origin: z.string().min(1), path: z.string().min(1).max(4096) }),
  /** Sent only by the options page's second confirmation, never by the first press. */
  z.strictObject({ type: z.literal("grant-full-access"), origin: z.string().min(1) }),
  z.strictObject({ type: z.literal("revoke-full-access"), origin: z.string().min(1) }),
]);
export type PopupRequest = z.infer<typeof popupRequestSchema>;

const pendingApprovalSchema = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("origin"), approvalId: z.string(), origin: z.string(), requestedAt: z.string() }),
  z.object({ kind: z.literal("workspace"), approvalId: z.string(), origin: z.string(), path: z.string(), requestedAt: z.string() }),
]);

export const approvalsSnapshotSchema = z.object({
  /** Questions waiting for the user, oldest first. */
  pending: z.array(pendingApprovalSchema),
  approved: z.array(z.string()),
  /** Origin → the folders the user let it use. */
  folders: z.record(z.string(), z.array(z.string())),
  /** Origins refused recently, answered without asking until `until`. */
  refused: z.array(z.object({ origin: z.string(), until: z.string() })),
  /** Origin → when the user granted it Full Access (ISO time). */
  fullAccess: z.record(z.string(), z.object({ grantedAt: z.string() })),
  /** Origin → when its Full Access was revoked (ISO time), for revocations Pedelec Desktop has not confirmed yet. */
  revocationsPending: z.record(z.string(), z.string()),
});
export type ApprovalsSnapshot = z.infer<typeof approvalsSnapshotSchema>;

/** Every answer carries a fresh snapshot when it can, so the page just re-renders. */
export const popupResponseSchema = z.union([
  z.object({ ok: z.literal(true), snapshot: approvalsSnapshotSchema }),
  z.object({ ok: z.literal(false), error: wireErrorSchema }),
]);
export type PopupResponse = z.infer<typeof popupResponseSchema>;

/**
 * The link to Pedelec on this computer (native host, then Core) as the worker's native link sees it:
 * - `not-connected`: nothing opened it since the worker started (or it was closed on purpose); the next page request
 *   opens it.
 * - `connecting`: the native host is starting, or it is reaching (or starting) Core.
 * - `connected`: Core answers; `version` is the Pedelec version the native host reports (Core runs from the same
 *   install).
 * - `host-missing`: the browser could not start the native host (`NATIVE_HOST_UNAVAILABLE`; Chrome's own reason, such
 *   as "Specified native messaging host not found", is in `error.details.lastError`).
 * - `core-unavailable`: the native host runs but Core could not start or went away (`CORE_RUNTIME_UNAVAILABLE`).
 * - `disconnected`: the native host went away after it had spoken (`NATIVE_CONNECTION_CLOSED`); the next request
 *   reopens the link.
 */
export const desktopLinkStatusSchema = z.discriminatedUnion("state", [
  z.object({ state: z.literal("not-connected") }),
  z.object({ state: z.literal("connecting"), version: z.string().optional() }),
  z.object({ state: z.literal("connected"), version: z.string() }),
  z.object({ state: z.literal("host-missing"), error: wireErrorSchema }),
  z.object({ state: z.literal("core-unavailable"), version: z.string(), error: wireErrorSchema.optional() }),
  z.object({ state: z.literal("disconnected"), error: wireErrorSchema }),
]);
export type DesktopLinkStatus = z.infer<typeof desktopLinkStatusSchema>;

/**
 * The popup asks about the desktop link apart from the approval lists, on its own timer while it is open.
 * `check-desktop-link` also opens the link when nothing has yet (starting the native host, which starts Core) and
 * waits a few seconds for the host to say whether Core answers.
 */
export const desktopLinkRequestSchema = z.discriminatedUnion("type", [
  z.strictObject({ type: z.literal("get-desktop-link") }),
  z.strictObject({ type: z.literal("check-desktop-link") }),
]);
export type DesktopLinkRequest = z.infer<typeof desktopLinkRequestSchema>;

export const desktopLinkResponseSchema = z.union([
  z.object({ ok: z.literal(true), link: desktopLinkStatusSchema }),
  z.object({ ok: z.literal(false), error: wireErrorSchema }),
]);
export type DesktopLinkResponse = z.infer<typeof desktopLinkResponseSchema>;

/** Worker → any open extension page: the pending, approved, consented, refused or Full Access lists changed. */
export const approvalsChangedSchema = z.strictObject({ type: z.literal("approvals-changed") });
export type ApprovalsChanged = z.infer<typeof approvalsChangedSchema>;
