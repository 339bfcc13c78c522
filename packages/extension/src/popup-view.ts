import type { ApprovalsSnapshot } from "./internal-messages.js";

export type PopupAction = "approve" | "reject" | "revoke";

/**
 * Renders both lists. Buttons carry `data-action` and `data-origin`; the popup's click handler (and end-to-end
 * tests) rely on exactly these attributes.
 */
export function renderApprovals(document: Document, snapshot: ApprovalsSnapshot, highlightApprovalId: string | null): void {
  const pendingList = requireElement(document, "pending");
  const approvedList = requireElement(document, "approved");

  pendingList.replaceChildren(
    ...(snapshot.pending.length === 0
      ? [emptyItem(document, "No site is waiting for approval.")]
      : snapshot.pending.map((pending) => {
          const item = document.createElement("li");
          if (pending.approvalId === highlightApprovalId) item.classList.add("highlight");
          const actions = document.createElement("div");
          actions.className = "actions";
          actions.append(
            actionButton(document, "approve", pending.origin, "Approve"),
            actionButton(document, "reject", pending.origin, "Reject"),
          );
          item.append(
            textBlock(document, "origin", pending.origin),
            textBlock(document, "when", `asked at ${formatTime(pending.requestedAt)}`),
            actions,
          );
          return item;
        })),
  );

  approvedList.replaceChildren(
    ...(snapshot.approved.length === 0
      ? [emptyItem(document, "No approved sites yet.")]
      : snapshot.approved.map((origin) => {
          const item = document.createElement("li");
          item.className = "row";
          item.append(textBlock(document, "origin", origin), actionButton(document, "revoke", origin, "Revoke"));
          return item;
        })),
  );
}

export function showStatus(document: Document, text: string, kind: "info" | "error" = "info"): void {
  const status = requireElement(document, "status");
  status.textContent = text;
  status.classList.toggle("error", kind === "error");
}

function actionButton(document: Document, action: PopupAction, origin: string, label: string): HTMLButtonElement {
  const button = document.createElement("button");
  button.type = "button";
  button.dataset.action = action;
  button.dataset.origin = origin;
  button.textContent = label;
  return button;
}

function textBlock(document: Document, className: string, text: string): HTMLDivElement {
  const block = document.createElement("div");
  block.className = className;
  block.textContent = text;
  return block;
}

function emptyItem(document: Document, text: string): HTMLLIElement {
  const item = document.createElement("li");
  item.className = "empty";
  item.textContent = text;
  return item;
}

function formatTime(iso: string): string {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleTimeString();
}

function requireElement(document: Document, id: string): HTMLElement {
  const element = document.getElementById(id);
  if (!element) throw new Error(`popup.html lacks #${id}`);
  return element;
}
