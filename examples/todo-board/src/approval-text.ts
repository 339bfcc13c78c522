import type { ApprovalStatus } from "@kaoruisaac/pedelec";

export interface ApprovalText {
  /** One line for `#approval`. */
  text: string;
  /** What the user should do next, or "" when nothing is needed. */
  hint: string;
}

/** Puts getApprovalStatus() into words: is the extension there, is this origin approved, is the desktop app up. */
export function describeApproval(status: ApprovalStatus, extensionId: string): ApprovalText {
  if (!status.installed) {
    return {
      text: "Extension not installed (or not reachable from this page)",
      hint: `Install the Pedelec extension, or open this page with ?extensionId=<id> if yours is not ${extensionId}.`,
    };
  }
  const desktop = status.appConnected ? "desktop app connected" : "desktop app not connected yet";
  if (!status.approved) {
    return {
      text: `Extension installed; origin ${status.origin} not approved; ${desktop}`,
      hint: `Press Connect, then approve ${status.origin} in the Pedelec extension popup.`,
    };
  }
  return { text: `Extension installed; origin ${status.origin} approved; ${desktop}`, hint: "" };
}
