import { isAllowedPageOrigin } from "@pedelec/protocol/origin";
import { summarizeIssues } from "@pedelec/protocol/issue-summary";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import type { ApprovalBroker } from "./approval-broker.js";
import type { ApprovalStore } from "./approval-store.js";
import { popupRequestSchema, type ApprovalsSnapshot, type PopupRequest, type PopupResponse } from "./internal-messages.js";
import type { WorkspaceConsentStore } from "./workspace-consent-store.js";
import { normalizeWorkspacePath } from "./workspace-path.js";

export interface PopupRequestHandlerOptions {
  approvals: ApprovalBroker;
  approvedOrigins: ApprovalStore;
  consents: WorkspaceConsentStore;
  /** Tells other open extension pages that the lists changed. */
  onChange?: () => void;
}

/** Serves the popup's and the options page's internal messages. Invalid input is answered, never thrown. */
export function createPopupRequestHandler(options: PopupRequestHandlerOptions): (message: unknown) => Promise<PopupResponse> {
  const snapshot = async (): Promise<ApprovalsSnapshot> => ({
    pending: options.approvals.list(),
    approved: await options.approvedOrigins.list(),
    folders: await options.consents.list(),
    refused: options.approvals.refusedOrigins(),
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
        // Folder consents belong to an approval; they go with it.
        await options.approvedOrigins.revoke(request.origin);
        return options.consents.revokeOrigin(request.origin);
      case "revoke-folder":
        return options.consents.revoke(request.origin, request.path);
    }
  };

  return async (message) => {
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
