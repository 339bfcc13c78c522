import type { Activity } from "@pedelec/protocol/session-events";
import { truncateUtf8 } from "../truncate-utf8.js";

export const ACTIVITY_TITLE_MAX_BYTES = 4 * 1024;

/** How a Claude Code tool shows up as a normalized activity: its kind, and what to use as the title. */
export function describeClaudeToolUse(name: string, input: unknown): { kind: Activity["kind"]; title: string } {
  const field = (key: string): string | null => {
    if (typeof input !== "object" || input === null) return null;
    const value = (input as Record<string, unknown>)[key];
    return typeof value === "string" && value.length > 0 ? value : null;
  };
  const titled = (kind: Activity["kind"], title: string | null) => ({
    kind,
    title: truncateUtf8(title ?? name, ACTIVITY_TITLE_MAX_BYTES).text,
  });
  switch (name) {
    case "Bash":
      return titled("command", field("command"));
    case "Edit":
    case "Write":
    case "MultiEdit":
      return titled("file-edit", field("file_path"));
    case "NotebookEdit":
      return titled("file-edit", field("notebook_path") ?? field("file_path"));
    case "Read":
      return titled("file-read", field("file_path"));
    case "WebSearch":
      return titled("web-search", field("query"));
    case "WebFetch":
      return titled("web-search", field("url"));
    default:
      return titled("tool", name);
  }
}
