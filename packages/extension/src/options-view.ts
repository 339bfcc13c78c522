import type { ApprovalsSnapshot } from "./internal-messages.js";
import { ownValue } from "./own-record.js";
import { actionButton, actionRow, emptyItem, renderRefused, requireElement, textBlock } from "./page-elements.js";

/** What Full Access means, shown before the user can grant it. */
export const FULL_ACCESS_WARNING =
  "Full Access lets this site's scripts and the AI agent run as you, outside the sandbox: they can read and change any " +
  "of your files, use the network, and run other programs on this computer. Grant it only to a site you trust completely.";

/**
 * Renders one row per site, `li[data-origin="<origin>"]`, holding the site's actions (`.actions`: revoke-approval,
 * and grant-full-access or revoke-full-access), its access ("Full Access since …" / "Sandbox only") and the folders it
 * may use, each with a revoke-folder button carrying `data-path`. Buttons inside a row take their origin from the
 * row. For the origins in `confirming` the row also shows the Full Access warning with confirm-full-access and
 * cancel-full-access. A site with folders or a grant but no approval (storage edited by hand) is listed too, so it can
 * be cleaned up.
 */
export function renderOptions(document: Document, snapshot: ApprovalsSnapshot, confirming: ReadonlySet<string> = new Set()): void {
  const origins = [...new Set([...snapshot.approved, ...Object.keys(snapshot.folders), ...Object.keys(snapshot.fullAccess)])];
  requireElement(document, "origins").replaceChildren(
    ...(origins.length === 0
      ? [emptyItem(document, "No approved sites yet. A site asks for approval the first time it starts a session.")]
      : origins.map((origin) => siteRow(document, origin, snapshot, confirming.has(origin)))),
  );
  renderRefused(document, snapshot.refused);
}

function siteRow(document: Document, origin: string, snapshot: ApprovalsSnapshot, confirming: boolean): HTMLLIElement {
  const approved = snapshot.approved.includes(origin);
  const grant = ownValue(snapshot.fullAccess, origin);
  const revokedAt = ownValue(snapshot.revocationsPending, origin);
  const folders = ownValue(snapshot.folders, origin) ?? [];

  const row = document.createElement("li");
  row.className = "site";
  row.dataset.origin = origin;

  const header = document.createElement("div");
  header.className = "row";
  const title = document.createElement("div");
  title.append(
    textBlock(document, "origin", origin),
    textBlock(document, "when", approved ? "Approved" : "Not approved"),
    textBlock(document, grant ? "access full" : "access", grant ? `Full Access since ${formatDateTime(grant.grantedAt)}` : "Sandbox only"),
  );
  if (revokedAt !== undefined) {
    title.append(
      textBlock(
        document,
        "revocation",
        `Full Access revoked at ${formatDateTime(revokedAt)}; Pedelec Desktop has not confirmed it yet (tried again on the next use).`,
      ),
    );
  }
  const buttons = [actionButton(document, "revoke-approval", approved ? "Revoke approval" : "Remove")];
  if (grant) buttons.push(actionButton(document, "revoke-full-access", "Revoke Full Access"));
  else if (approved) buttons.push(actionButton(document, "grant-full-access", "Grant Full Access…"));
  header.append(title, actionRow(document, ...buttons));
  row.append(header);

  if (confirming && approved && !grant) row.append(fullAccessWarning(document, origin));

  const folderList = document.createElement("ul");
  folderList.className = "folders";
  folderList.replaceChildren(
    ...(folders.length === 0
      ? [emptyItem(document, "No folders. Its sessions work in a folder Pedelec creates and removes.")]
      : folders.map((path) => {
          const item = document.createElement("li");
          item.className = "row";
          item.append(textBlock(document, "folder", path), actionButton(document, "revoke-folder", "Remove", { path }));
          return item;
        })),
  );

  row.append(textBlock(document, "label", "Folders it may use"), folderList);
  return row;
}

function fullAccessWarning(document: Document, origin: string): HTMLDivElement {
  const warning = document.createElement("div");
  warning.className = "full-access-warning";
  warning.setAttribute("role", "alert");
  warning.append(
    textBlock(document, "label", `Give ${origin} Full Access?`),
    textBlock(document, "explain", FULL_ACCESS_WARNING),
    actionRow(document, actionButton(document, "confirm-full-access", "Grant Full Access"), actionButton(document, "cancel-full-access", "Cancel")),
  );
  return warning;
}

function formatDateTime(iso: string): string {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString();
}
