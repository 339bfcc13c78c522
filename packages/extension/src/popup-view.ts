import type { WireError } from "@pedelec/protocol/wire-error";
import type { ApprovalsSnapshot, DesktopLinkStatus } from "./internal-messages.js";
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

/** What the popup says about the desktop link: a headline, the reason when something is wrong, and what to do. */
export interface DesktopLinkDescription {
  headline: string;
  /** Chrome's or the native host's own reason, word for word. */
  reason?: string;
  /** What the user does next; commands are in backticks. */
  remedy?: string;
  /** Whether "Check now" helps: it opens the link when nothing has, or tries again after a failure. */
  canCheck: boolean;
}

const FORBIDDEN_HOST = /forbidden/i;

/** `extensionId`: this extension's id, for the install command when the host is registered for another one. */
export function describeDesktopLink(status: DesktopLinkStatus, extensionId: string): DesktopLinkDescription {
  switch (status.state) {
    case "not-connected":
      return { headline: "Not connected yet", remedy: "Pedelec connects when a page uses it, or when you press Check now.", canCheck: true };
    case "connecting":
      return { headline: "Connecting…", reason: "Starting the native host and Pedelec Core.", canCheck: false };
    case "connected":
      return { headline: `Connected to Pedelec Core ${status.version}`, canCheck: false };
    case "host-missing": {
      const reason = chromeReason(status.error);
      if (FORBIDDEN_HOST.test(reason)) {
        return {
          headline: "The native host does not accept this extension",
          reason,
          remedy: `Run \`npx pedelec install --extension-id ${extensionId}\` in your Pedelec checkout, then press Check now.`,
          canCheck: true,
        };
      }
      return {
        headline: "The native host is not installed",
        reason,
        remedy: "Run `npx pedelec install` in your Pedelec checkout, then press Check now.",
        canCheck: true,
      };
    }
    case "core-unavailable":
      return {
        headline: "Pedelec Core is not available",
        reason: status.error?.message ?? "The native host cannot reach Pedelec Core.",
        remedy: "Run `npx pedelec doctor` to see why, then press Check now.",
        canCheck: true,
      };
    case "disconnected":
      return {
        headline: "The native host stopped",
        reason: status.error.message,
        remedy: "Pedelec reconnects on the next request. If it keeps stopping, run `npx pedelec doctor`.",
        canCheck: true,
      };
  }
}

/** Chrome's own words when it has them ("Specified native messaging host not found."), else the error's message. */
function chromeReason(error: WireError): string {
  const details = error.details;
  if (typeof details === "object" && details !== null && "lastError" in details && typeof details.lastError === "string") return details.lastError;
  return error.message;
}

/**
 * Renders the desktop link into `#desktop-link` (its `data-state` is the link's state): `.link-headline`,
 * `.link-reason`, `.link-remedy` with commands in `code`, and a `check-desktop-link` button when checking helps.
 */
export function renderDesktopLink(document: Document, status: DesktopLinkStatus, extensionId: string): void {
  const container = requireElement(document, "desktop-link");
  const description = describeDesktopLink(status, extensionId);
  container.dataset.state = status.state;
  const parts: HTMLElement[] = [textBlock(document, "link-headline", description.headline)];
  if (description.reason !== undefined) parts.push(textBlock(document, "link-reason", description.reason));
  if (description.remedy !== undefined) {
    const remedy = document.createElement("div");
    remedy.className = "link-remedy";
    remedy.append(...withCommands(document, description.remedy));
    parts.push(remedy);
  }
  if (description.canCheck) parts.push(actionRow(document, actionButton(document, "check-desktop-link", "Check now")));
  container.replaceChildren(...parts);
}

/** Text with its backticked parts as `code` elements, so commands stand out and copy cleanly. */
function withCommands(document: Document, text: string): (string | HTMLElement)[] {
  return text.split("`").map((part, index) => {
    if (index % 2 === 0) return part;
    const code = document.createElement("code");
    code.textContent = part;
    return code;
  });
}
