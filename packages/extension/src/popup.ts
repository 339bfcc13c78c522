import { z } from "zod";
import { DesktopLinkWatch } from "./desktop-link-watch.js";
import { runExtensionPage, type ActionRequest } from "./extension-page-client.js";
import { desktopLinkResponseSchema, type DesktopLinkRequest, type DesktopLinkResponse } from "./internal-messages.js";
import { showStatus } from "./page-elements.js";
import { renderApprovals, renderDesktopLink } from "./popup-view.js";

// Extension CSP forbids eval; without this zod would probe for it and log a CSP violation.
z.config({ jitless: true });

// The same page is the toolbar popup and the approval window the worker opens. The worker closes that window
// itself once nothing is pending, so the page never closes itself (a question arriving meanwhile would be lost).

/** The request a button stands for, and what to tell the user once it is done. */
const requestFor: ActionRequest = (action, origin, path) => {
  switch (action) {
    case "approve":
    case "reject":
      return { request: { type: "decide-approval", origin, decision: action }, done: `${action === "approve" ? "Approved" : "Rejected"} ${origin}.` };
    case "allow-folder":
    case "deny-folder": {
      if (path === undefined) return undefined;
      const decision = action === "allow-folder" ? "allow" : "deny";
      const done = decision === "allow" ? `${origin} may use ${path}.` : `${origin} may not use ${path}.`;
      return { request: { type: "decide-workspace", origin, path, decision }, done };
    }
    case "revoke":
      return { request: { type: "revoke-origin", origin }, done: `Revoked ${origin}.` };
    default:
      return undefined;
  }
};

runExtensionPage(document, requestFor, renderApprovals);

/** Asks the worker about the desktop link; a worker that cannot answer is an answer too. */
async function askWorker(request: DesktopLinkRequest): Promise<DesktopLinkResponse> {
  try {
    const parsed = desktopLinkResponseSchema.safeParse(await chrome.runtime.sendMessage(request));
    if (parsed.success) return parsed.data;
    return { ok: false, error: { code: "SDK_PROTOCOL_ERROR", message: "The extension sent an unexpected answer about the desktop link." } };
  } catch (error) {
    return { ok: false, error: { code: "EXTENSION_UNAVAILABLE", message: error instanceof Error ? error.message : String(error) } };
  }
}

const linkWatch = new DesktopLinkWatch({
  ask: askWorker,
  show: (status) => renderDesktopLink(document, status, chrome.runtime.id),
  showError: (message) => showStatus(document, message, "error"),
});
linkWatch.start();
document.addEventListener("click", (event) => {
  const button = event.target instanceof Element ? event.target.closest('button[data-action="check-desktop-link"]') : null;
  if (button instanceof HTMLButtonElement) void linkWatch.check();
});

document.getElementById("manage")?.addEventListener("click", (event) => {
  event.preventDefault();
  void chrome.runtime.openOptionsPage();
});
