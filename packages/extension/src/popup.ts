import { z } from "zod";
import { callWorker, onActionClick, onApprovalsChanged } from "./extension-page-client.js";
import type { PopupRequest } from "./internal-messages.js";
import { showStatus } from "./page-elements.js";
import { renderApprovals } from "./popup-view.js";

// Extension CSP forbids eval; without this zod would probe for it and log a CSP violation.
z.config({ jitless: true });

// The same page is the toolbar popup and the approval window the worker opens. The worker closes that window
// itself once nothing is pending, so the page never closes itself (a question arriving meanwhile would be lost).

async function refresh(): Promise<void> {
  const response = await callWorker({ type: "list-approvals" });
  if (response.ok) renderApprovals(document, response.snapshot);
  else showStatus(document, response.error.message, "error");
}

/** The request a button stands for, and what to tell the user once it is done. */
function requestFor(action: string, origin: string, path: string | undefined): { request: PopupRequest; done: string } | undefined {
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
}

onActionClick(document, async (action, { origin, path }) => {
  const chosen = origin === undefined ? undefined : requestFor(action, origin, path);
  if (!chosen) return;
  const response = await callWorker(chosen.request);
  if (!response.ok) {
    showStatus(document, response.error.message, "error");
    return;
  }
  renderApprovals(document, response.snapshot);
  showStatus(document, chosen.done);
});

onApprovalsChanged(() => void refresh());

document.getElementById("manage")?.addEventListener("click", (event) => {
  event.preventDefault();
  void chrome.runtime.openOptionsPage();
});

void refresh();
