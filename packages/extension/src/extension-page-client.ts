import { approvalsChangedSchema, popupResponseSchema, type ApprovalsSnapshot, type PopupRequest, type PopupResponse } from "./internal-messages.js";
import { showStatus } from "./page-elements.js";

/** Sends one internal request to the service worker; every failure comes back as an answer, never a throw. */
async function callWorker(request: PopupRequest): Promise<PopupResponse> {
  try {
    const parsed = popupResponseSchema.safeParse(await chrome.runtime.sendMessage(request));
    if (parsed.success) return parsed.data;
    return { ok: false, error: { code: "SDK_PROTOCOL_ERROR", message: "The extension sent an unexpected answer." } };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return { ok: false, error: { code: "EXTENSION_UNAVAILABLE", message } };
  }
}

/** Runs `listener` on the worker's change notices; other pages' requests also pass by and are left unanswered. */
function onApprovalsChanged(listener: () => void): void {
  chrome.runtime.onMessage.addListener((message: unknown) => {
    if (approvalsChangedSchema.safeParse(message).success) listener();
    return false;
  });
}

/**
 * Routes clicks on `button[data-action]` to `handle`, with the button's data and the `data-origin` of the button or
 * the nearest row holding one. Buttons stay disabled until `handle` settles, so one click sends one request.
 */
function onActionClick(document: Document, handle: (action: string, data: { origin?: string; path?: string }) => Promise<void>): void {
  document.addEventListener("click", (event) => {
    const button = event.target instanceof Element ? event.target.closest("button[data-action]") : null;
    if (!(button instanceof HTMLButtonElement) || button.dataset.action === undefined) return;
    const origin = button.closest<HTMLElement>("[data-origin]")?.dataset.origin;
    const path = button.dataset.path;
    const buttons = [...document.querySelectorAll<HTMLButtonElement>("button[data-action]")];
    for (const candidate of buttons) candidate.disabled = true;
    void handle(button.dataset.action, { origin, path }).finally(() => {
      // Re-rendering replaced most buttons; whatever is left is usable again.
      for (const candidate of document.querySelectorAll<HTMLButtonElement>("button[data-action]")) candidate.disabled = false;
    });
  });
}

/** The request a button stands for, and what to tell the user once it is done; undefined for a button it ignores. */
export type ActionRequest = (action: string, origin: string, path: string | undefined) => { request: PopupRequest; done: string } | undefined;

/**
 * Runs one of the extension's own pages (the popup, the options page): renders the worker's snapshot, turns button
 * clicks into requests through `requestFor`, and renders again on every change notice.
 */
export function runExtensionPage(
  document: Document,
  requestFor: ActionRequest,
  render: (document: Document, snapshot: ApprovalsSnapshot) => void,
): void {
  const refresh = async (): Promise<void> => {
    const response = await callWorker({ type: "list-approvals" });
    if (response.ok) render(document, response.snapshot);
    else showStatus(document, response.error.message, "error");
  };
  onActionClick(document, async (action, { origin, path }) => {
    const chosen = origin === undefined ? undefined : requestFor(action, origin, path);
    if (!chosen) return;
    const response = await callWorker(chosen.request);
    if (!response.ok) {
      showStatus(document, response.error.message, "error");
      return;
    }
    render(document, response.snapshot);
    showStatus(document, chosen.done);
  });
  onApprovalsChanged(() => void refresh());
  void refresh();
}
