import { z } from "zod";
import { runExtensionPage, type ActionRequest } from "./extension-page-client.js";
import { renderOptions } from "./options-view.js";

// Extension CSP forbids eval; without this zod would probe for it and log a CSP violation.
z.config({ jitless: true });

/** The request a button stands for, and what to tell the user once it is done. */
const requestFor: ActionRequest = (action, origin, path) => {
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
};

runExtensionPage(document, requestFor, renderOptions);
