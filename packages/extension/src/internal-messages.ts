import { z } from "zod";
import { wireErrorSchema } from "@pedelec/protocol/wire-error";

/**
 * Messages between the extension's own pages (the approval popup, the options page) and the service worker
 * (`chrome.runtime.sendMessage`). They never leave the extension, so they live here rather than in the page or
 * native wire.
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

/** Worker → any open extension page: the pending, approved, consented, refused or Full Access lists changed. */
export const approvalsChangedSchema = z.strictObject({ type: z.literal("approvals-changed") });
export type ApprovalsChanged = z.infer<typeof approvalsChangedSchema>;
