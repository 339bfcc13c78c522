import { z } from "zod";
import { runExtensionPage, type ActionRequest } from "./extension-page-client.js";
import { renderApprovals } from "./popup-view.js";

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

document.getElementById("manage")?.addEventListener("click", (event) => {
  event.preventDefault();
  void chrome.runtime.openOptionsPage();
});
