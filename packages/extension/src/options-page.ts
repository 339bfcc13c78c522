import type { ActionRequest } from "./extension-page-client.js";
import type { ApprovalsSnapshot } from "./internal-messages.js";
import { renderOptions } from "./options-view.js";

/**
 * The options page's state beyond the worker's snapshot: which rows show the Full Access warning. Pressing
 * grant-full-access only opens the warning; confirm-full-access is the one button that asks the worker to grant.
 */
export class OptionsPage {
  readonly #confirming = new Set<string>();
  #snapshot: ApprovalsSnapshot | undefined;

  constructor(private readonly document: Document) {}

  readonly render = (document: Document, snapshot: ApprovalsSnapshot): void => {
    this.#snapshot = snapshot;
    // A warning for a site that lost its approval, or got Full Access elsewhere, has nothing left to confirm.
    for (const origin of this.#confirming) {
      if (!snapshot.approved.includes(origin) || Object.hasOwn(snapshot.fullAccess, origin)) this.#confirming.delete(origin);
    }
    renderOptions(document, snapshot, this.#confirming);
  };

  /** The request a button stands for, and what to tell the user once it is done; undefined when it stays on the page. */
  readonly requestFor: ActionRequest = (action, origin, path) => {
    switch (action) {
      case "revoke-approval":
        return {
          request: { type: "revoke-origin", origin },
          done: `${origin} is no longer approved; its folders and any Full Access were removed.`,
        };
      case "revoke-folder":
        return path === undefined ? undefined : { request: { type: "revoke-folder", origin, path }, done: `${origin} may no longer use ${path}.` };
      case "approve":
        return { request: { type: "decide-approval", origin, decision: "approve" }, done: `Approved ${origin}.` };
      case "grant-full-access":
        this.#setConfirming(origin, true);
        return undefined;
      case "cancel-full-access":
        this.#setConfirming(origin, false);
        return undefined;
      case "confirm-full-access":
        this.#confirming.delete(origin);
        return { request: { type: "grant-full-access", origin }, done: `${origin} has Full Access.` };
      case "revoke-full-access":
        return { request: { type: "revoke-full-access", origin }, done: `${origin} no longer has Full Access.` };
      default:
        return undefined;
    }
  };

  #setConfirming(origin: string, confirming: boolean): void {
    if (confirming) this.#confirming.add(origin);
    else this.#confirming.delete(origin);
    if (this.#snapshot) renderOptions(this.document, this.#snapshot, this.#confirming);
  }
}
