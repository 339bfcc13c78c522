import type { ApprovalsSnapshot } from "./internal-messages.js";
import { actionButton, actionRow, emptyItem, formatTime, renderRefused, requireElement, textBlock } from "./page-elements.js";

/**
 * Renders the pending questions, the approved sites and the recently refused ones. Buttons carry `data-action`,
 * `data-origin` and, for folders, `data-path`; the popup's click handler (and end-to-end tests) rely on exactly these.
 */
export function renderApprovals(document: Document, snapshot: ApprovalsSnapshot): void {
  const pendingList = requireElement(document, "pending");
  const approvedList = requireElement(document, "approved");

  pendingList.replaceChildren(
    ...(snapshot.pending.length === 0
      ? [emptyItem(document, "Nothing is waiting for your answer.")]
      : snapshot.pending.map((pending) => {
          const item = document.createElement("li");
          item.dataset.kind = pending.kind;
          const asked = textBlock(document, "when", `asked at ${formatTime(pending.requestedAt)}`);
          if (pending.kind === "origin") {
            item.append(
              textBlock(document, "origin", pending.origin),
              textBlock(document, "explain", "wants to start sessions with the AI agent on this computer."),
              asked,
              actionRow(
                document,
                actionButton(document, "approve", "Approve", { origin: pending.origin }),
                actionButton(document, "reject", "Reject", { origin: pending.origin }),
              ),
            );
          } else {
            const data = { origin: pending.origin, path: pending.path };
            item.append(
              textBlock(document, "label", "Folder access"),
              textBlock(document, "folder", pending.path),
              textBlock(document, "explain", `${pending.origin} wants the AI agent to work in this folder: read, change and create files in it.`),
              asked,
              actionRow(
                document,
                actionButton(document, "allow-folder", "Allow this folder", data),
                actionButton(document, "deny-folder", "Don't allow", data),
              ),
            );
          }
          return item;
        })),
  );

  approvedList.replaceChildren(
    ...(snapshot.approved.length === 0
      ? [emptyItem(document, "No approved sites yet.")]
      : snapshot.approved.map((origin) => {
          const item = document.createElement("li");
          item.className = "row";
          item.append(textBlock(document, "origin", origin), actionButton(document, "revoke", "Revoke", { origin }));
          return item;
        })),
  );

  renderRefused(document, snapshot.refused);
}
