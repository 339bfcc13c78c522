import type { Activity } from "@pedelec/protocol/session-events";
import { truncateUtf8 } from "../truncate-utf8.js";

export const ACTIVITY_TITLE_MAX_BYTES = 4 * 1024;

/** How an Antigravity tool step shows up as a normalized activity: its kind, and what to use as the title. */
export function describeAntigravityTool(
  name: string,
  parameters: Record<string, unknown> | null | undefined,
): {
  kind: Activity["kind"];
  title: string;
} {
  const field = (...keys: string[]): string | null => {
    for (const key of keys) {
      const value = parameters?.[key];
      if (typeof value === "string" && value.length > 0) return value;
    }
    return null;
  };
  const titled = (kind: Activity["kind"], title: string | null) => ({
    kind,
    title: truncateUtf8(title ?? name, ACTIVITY_TITLE_MAX_BYTES).text,
  });
  switch (name) {
    case "run_command":
      return titled("command", field("CommandLine", "command"));
    case "write_to_file":
    case "replace_file_content":
    case "multi_replace_file_content":
      return titled("file-edit", field("TargetFile", "AbsolutePath", "file_path"));
    case "view_file":
    case "view_file_outline":
    case "view_code_item":
      return titled("file-read", field("AbsolutePath", "File", "file_path"));
    case "search_web":
      return titled("web-search", field("query", "Query"));
    case "read_url_content":
      return titled("web-search", field("Url", "url"));
    default:
      return titled("tool", name);
  }
}
