import type { Activity } from "@pedelec/protocol/session-events";
import { truncateUtf8 } from "../truncate-utf8.js";

export const OPENCODE_ACTIVITY_TITLE_MAX_BYTES = 4 * 1024;

/**
 * How an OpenCode tool shows up as a normalized activity: its kind, and what to use as the title. `stateTitle` is
 * OpenCode's own short title of a finished call (e.g. a relative path), used where the input names nothing better.
 */
export function describeOpencodeToolUse(
  tool: string,
  input: Record<string, unknown>,
  stateTitle: string | undefined,
): { kind: Activity["kind"]; title: string } {
  const field = (key: string): string | null => {
    const value = input[key];
    return typeof value === "string" && value.length > 0 ? value : null;
  };
  const fallback = stateTitle !== undefined && stateTitle !== "" ? stateTitle : tool;
  const titled = (kind: Activity["kind"], title: string | null) => ({
    kind,
    title: truncateUtf8(title ?? fallback, OPENCODE_ACTIVITY_TITLE_MAX_BYTES).text,
  });
  switch (tool) {
    case "bash":
      return titled("command", field("command"));
    case "edit":
    case "write":
    case "multiedit":
    case "patch":
    case "apply_patch":
      return titled("file-edit", field("filePath"));
    case "read":
      return titled("file-read", field("filePath"));
    case "webfetch":
      return titled("web-search", field("url"));
    case "websearch":
    case "codesearch":
      return titled("web-search", field("query"));
    default:
      return titled("tool", stateTitle !== undefined && stateTitle !== "" ? `${tool}: ${stateTitle}` : tool);
  }
}
