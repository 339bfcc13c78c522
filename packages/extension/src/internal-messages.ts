import { z } from "zod";
import { wireErrorSchema } from "@pedelec/protocol/pedelec-error";

/**
 * Messages between the popup and the service worker (`chrome.runtime.sendMessage`). They never leave the
 * extension, so they live here rather than in the page or native wire.
 */
export const popupRequestSchema = z.discriminatedUnion("type", [
  z.strictObject({ type: z.literal("list-approvals") }),
  z.strictObject({ type: z.literal("decide-approval"), origin: z.string().min(1), decision: z.enum(["approve", "reject"]) }),
  z.strictObject({ type: z.literal("revoke-origin"), origin: z.string().min(1) }),
]);
export type PopupRequest = z.infer<typeof popupRequestSchema>;

export const approvalsSnapshotSchema = z.object({
  pending: z.array(z.object({ approvalId: z.string(), origin: z.string(), requestedAt: z.string() })),
  approved: z.array(z.string()),
});
export type ApprovalsSnapshot = z.infer<typeof approvalsSnapshotSchema>;

/** Every answer carries a fresh snapshot when it can, so the popup just re-renders. */
export const popupResponseSchema = z.union([
  z.object({ ok: z.literal(true), snapshot: approvalsSnapshotSchema }),
  z.object({ ok: z.literal(false), error: wireErrorSchema }),
]);
export type PopupResponse = z.infer<typeof popupResponseSchema>;

/** Worker → any open popup: the pending or approved list changed. */
export const approvalsChangedSchema = z.strictObject({ type: z.literal("approvals-changed") });
export type ApprovalsChanged = z.infer<typeof approvalsChangedSchema>;
