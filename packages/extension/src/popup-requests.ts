import { isAllowedPageOrigin } from "@pedelec/protocol/origin";
import { summarizeIssues } from "@pedelec/protocol/issue-summary";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import type { ApprovalBroker } from "./approval-broker.js";
import type { ApprovalStore } from "./approval-store.js";
import type { FullAccessGrantStore } from "./full-access-grants.js";
import type { FullAccessRevocations } from "./full-access-revocations.js";
import {
  desktopLinkRequestSchema,
  popupRequestSchema,
  type ApprovalsSnapshot,
  type DesktopLinkResponse,
  type PopupRequest,
  type PopupResponse,
} from "./internal-messages.js";
import type { NativeLink } from "./native-link.js";
import { ownValue } from "./own-record.js";
import type { RevocationStore } from "./revocation-store.js";
import type { WorkspaceConsentStore } from "./workspace-consent-store.js";
import { normalizeWorkspacePath } from "./workspace-path.js";

export interface PopupRequestHandlerOptions {
  approvals: ApprovalBroker;
  approvedOrigins: ApprovalStore;
  consents: WorkspaceConsentStore;
  grants: FullAccessGrantStore;
  revocations: FullAccessRevocations;
  pendingRevocations: RevocationStore;
  /** The worker's native link, whose state the popup shows. */
  link: Pick<NativeLink, "status" | "probe">;
  /** How long `check-desktop-link` waits for the native host to say whether Core answers. */
  linkCheckTimeoutMs?: number;
  /** Tells other open extension pages that the lists changed. */
  onChange?: () => void;
}

/** A cold start (host, then Core, then its answer) takes a few seconds; the popup keeps polling after this anyway. */
const DEFAULT_LINK_CHECK_TIMEOUT_MS = 5_000;

/**
 * Serves the popup's and the options page's internal messages: the approval requests, answered with a snapshot of the
 * lists, and the desktop link requests, answered with the link's state. Invalid input is answered, never thrown.
 */
export function createPopupRequestHandler(options: PopupRequestHandlerOptions): (message: unknown) => Promise<PopupResponse | DesktopLinkResponse> {
  const snapshot = async (): Promise<ApprovalsSnapshot> => ({
    pending: options.approvals.list(),
    approved: await options.approvedOrigins.list(),
    folders: await options.consents.list(),
    refused: options.approvals.refusedOrigins(),
    fullAccess: Object.fromEntries(
      Object.entries(await options.grants.list()).map(([origin, grant]) => [origin, { grantedAt: new Date(grant.grantedAt).toISOString() }]),
    ),
    revocationsPending: Object.fromEntries(
      Object.entries(await options.pendingRevocations.list()).map(([origin, revokedAt]) => [origin, new Date(revokedAt).toISOString()]),
    ),
  });

  const apply = async (request: Exclude<PopupRequest, { type: "list-approvals" }>): Promise<void> => {
    switch (request.type) {
      case "decide-approval":
        return options.approvals.decide(request.origin, request.decision);
      case "decide-workspace":
        // Only the spelling the broker asked about can be allowed; anything else is not a question it showed.
        if (normalizeWorkspacePath(request.path) !== request.path) {
          throw new PedelecError("INVALID_INPUT", `${request.path} is not a normalized folder path`);
        }
        return options.approvals.decideWorkspace(request.origin, request.path, request.decision);
      case "revoke-origin":
        // Full Access and folder consents belong to an approval; they go with it. Full Access goes first, so a
        // failure to store its revocation leaves the approval in place rather than an unapproved origin with a grant.
        if (ownValue(await options.grants.list(), request.origin) !== undefined) await options.revocations.revoke(request.origin);
        await options.approvedOrigins.revoke(request.origin);
        return options.consents.revokeOrigin(request.origin);
      case "revoke-folder":
        return options.consents.revoke(request.origin, request.path);
      case "grant-full-access":
        await options.grants.grant(request.origin);
        return;
      case "revoke-full-access":
        return options.revocations.revoke(request.origin);
    }
  };

  const answerLink = async (check: boolean): Promise<DesktopLinkResponse> => {
    if (check) await options.link.probe(options.linkCheckTimeoutMs ?? DEFAULT_LINK_CHECK_TIMEOUT_MS);
    return { ok: true, link: options.link.status };
  };

  return async (message) => {
    const linkRequest = desktopLinkRequestSchema.safeParse(message);
    if (linkRequest.success) return answerLink(linkRequest.data.type === "check-desktop-link");
    try {
      const parsed = popupRequestSchema.safeParse(message);
      if (!parsed.success) {
        const summary = summarizeIssues(parsed.error.issues);
        throw new PedelecError("INVALID_INPUT", `invalid popup request: ${summary.message}`, summary.details);
      }
      const request = parsed.data;
      if (request.type !== "list-approvals") {
        if (!isAllowedPageOrigin(request.origin)) {
          throw new PedelecError("INVALID_ORIGIN", `${request.origin} is not an origin Pedelec accepts`);
        }
        await apply(request);
        options.onChange?.();
      }
      return { ok: true, snapshot: await snapshot() };
    } catch (error) {
      return { ok: false, error: PedelecError.from(error, "STORAGE_ERROR").toWire() };
    }
  };
}
