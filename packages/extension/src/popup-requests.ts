import { isAllowedPageOrigin } from "@pedelec/protocol/origin";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import type { ApprovalBroker } from "./approval-broker.js";
import type { ApprovalStore } from "./approval-store.js";
import { popupRequestSchema, type ApprovalsSnapshot, type PopupResponse } from "./internal-messages.js";

export interface PopupRequestHandlerOptions {
  approvals: ApprovalBroker;
  approvedOrigins: ApprovalStore;
  /** Tells other open popups that the lists changed. */
  onChange?: () => void;
}

/** Serves the popup's internal messages. Invalid input is answered, never thrown. */
export function createPopupRequestHandler(options: PopupRequestHandlerOptions): (message: unknown) => Promise<PopupResponse> {
  const snapshot = async (): Promise<ApprovalsSnapshot> => ({
    pending: options.approvals.list(),
    approved: await options.approvedOrigins.list(),
  });

  return async (message) => {
    try {
      const parsed = popupRequestSchema.safeParse(message);
      if (!parsed.success) throw new PedelecError("INVALID_INPUT", "invalid popup request", parsed.error.issues);
      const request = parsed.data;
      if (request.type !== "list-approvals" && !isAllowedPageOrigin(request.origin)) {
        throw new PedelecError("INVALID_ORIGIN", `${request.origin} is not an origin Pedelec accepts`);
      }
      if (request.type === "decide-approval") {
        await options.approvals.decide(request.origin, request.decision);
        options.onChange?.();
      } else if (request.type === "revoke-origin") {
        await options.approvedOrigins.revoke(request.origin);
        options.onChange?.();
      }
      return { ok: true, snapshot: await snapshot() };
    } catch (error) {
      return { ok: false, error: PedelecError.from(error, "STORAGE_ERROR").toWire() };
    }
  };
}
