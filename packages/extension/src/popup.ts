import { z } from "zod";
import {
  approvalsChangedSchema,
  popupResponseSchema,
  type PopupRequest,
  type PopupResponse,
} from "./internal-messages.js";
import { renderApprovals, showStatus, type PopupAction } from "./popup-view.js";

// Extension CSP forbids eval; without this zod would probe for it and log a CSP violation.
z.config({ jitless: true });

/** Set when the worker opened this window for one approval; such a window closes itself once nothing is pending. */
const requestedApprovalId = new URLSearchParams(location.search).get("request");

async function call(request: PopupRequest): Promise<PopupResponse> {
  try {
    const parsed = popupResponseSchema.safeParse(await chrome.runtime.sendMessage(request));
    if (parsed.success) return parsed.data;
    return { ok: false, error: { code: "SDK_PROTOCOL_ERROR", message: "The extension sent an unexpected answer." } };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return { ok: false, error: { code: "EXTENSION_UNAVAILABLE", message } };
  }
}

async function refresh(): Promise<PopupResponse> {
  const response = await call({ type: "list-approvals" });
  if (response.ok) renderApprovals(document, response.snapshot, requestedApprovalId);
  else showStatus(document, response.error.message, "error");
  return response;
}

async function act(action: PopupAction, origin: string): Promise<void> {
  const response =
    action === "revoke"
      ? await call({ type: "revoke-origin", origin })
      : await call({ type: "decide-approval", origin, decision: action });
  if (!response.ok) {
    showStatus(document, response.error.message, "error");
    for (const button of document.querySelectorAll<HTMLButtonElement>("button[data-action]")) button.disabled = false;
    return;
  }
  renderApprovals(document, response.snapshot, requestedApprovalId);
  const verb = action === "approve" ? "Approved" : action === "reject" ? "Rejected" : "Revoked";
  showStatus(document, `${verb} ${origin}.`);
  if (requestedApprovalId !== null && action !== "revoke" && response.snapshot.pending.length === 0) {
    // Leave the confirmation visible for a moment before the window goes away.
    setTimeout(() => window.close(), 800);
  }
}

document.addEventListener("click", (event) => {
  const target = event.target instanceof Element ? event.target.closest("button[data-action]") : null;
  if (!(target instanceof HTMLButtonElement)) return;
  const action = target.dataset.action;
  const origin = target.dataset.origin;
  if ((action !== "approve" && action !== "reject" && action !== "revoke") || !origin) return;
  for (const button of document.querySelectorAll<HTMLButtonElement>("button[data-action]")) button.disabled = true;
  void act(action, origin);
});

// Only the worker's change notices matter here; other popups' requests also pass by and must be left unanswered.
chrome.runtime.onMessage.addListener((message: unknown) => {
  if (approvalsChangedSchema.safeParse(message).success) void refresh();
  return false;
});

void refresh();
