import type { ApprovalsSnapshot } from "./internal-messages.js";
import { actionButton, actionRow, emptyItem, renderRefused, requireElement, textBlock } from "./page-elements.js";

/**
 * Renders one row per site, `li[data-origin="<origin>"]`, holding the site's actions (`.actions`, revoke-approval)
 * and the folders it may use, each with a revoke-folder button carrying `data-path`. Buttons inside a row take their
 * origin from the row. A site with folders but no approval (storage edited by hand) is listed too, so it can be
 * cleaned up.
 */
export function renderOptions(document: Document, snapshot: ApprovalsSnapshot): void {
  const origins = [...new Set([...snapshot.approved, ...Object.keys(snapshot.folders)])];
  requireElement(document, "origins").replaceChildren(
    ...(origins.length === 0
      ? [emptyItem(document, "No approved sites yet. A site asks for approval the first time it starts a session.")]
      : origins.map((origin) => siteRow(document, origin, snapshot.approved.includes(origin), snapshot.folders[origin] ?? []))),
  );
  renderRefused(document, snapshot.refused);
}

function siteRow(document: Document, origin: string, approved: boolean, folders: readonly string[]): HTMLLIElement {
  const row = document.createElement("li");
  row.className = "site";
  row.dataset.origin = origin;

  const header = document.createElement("div");
  header.className = "row";
  const title = document.createElement("div");
  title.append(textBlock(document, "origin", origin), textBlock(document, "when", approved ? "Approved" : "Not approved"));
  header.append(title, actionRow(document, actionButton(document, "revoke-approval", approved ? "Revoke approval" : "Remove")));

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

  row.append(header, textBlock(document, "label", "Folders it may use"), folderList);
  return row;
}
