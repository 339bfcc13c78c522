import { z } from "zod";
import { callWorker, onActionClick, onApprovalsChanged } from "./extension-page-client.js";
import type { PopupRequest } from "./internal-messages.js";
import { renderOptions } from "./options-view.js";
import { showStatus } from "./page-elements.js";

// Extension CSP forbids eval; without this zod would probe for it and log a CSP violation.
z.config({ jitless: true });

async function refresh(): Promise<void> {
  const response = await callWorker({ type: "list-approvals" });
  if (response.ok) renderOptions(document, response.snapshot);
  else showStatus(document, response.error.message, "error");
}

/** The request a button stands for, and what to tell the user once it is done. */
function requestFor(action: string, origin: string, path: string | undefined): { request: PopupRequest; done: string } | undefined {
  switch (action) {
    case "revoke-approval":
      return { request: { type: "revoke-origin", origin }, done: `${origin} is no longer approved; its folders were removed.` };
    case "revoke-folder":
      return path === undefined ? undefined : { request: { type: "revoke-folder", origin, path }, done: `${origin} may no longer use ${path}.` };
    case "approve":
      return { request: { type: "decide-approval", origin, decision: "approve" }, done: `Approved ${origin}.` };
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
  renderOptions(document, response.snapshot);
  showStatus(document, chosen.done);
});

onApprovalsChanged(() => void refresh());

void refresh();
