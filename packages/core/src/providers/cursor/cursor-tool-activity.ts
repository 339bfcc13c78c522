import type { Activity } from "@pedelec/protocol/session-events";
import { truncateUtf8 } from "../truncate-utf8.js";

export const ACTIVITY_TITLE_MAX_BYTES = 4 * 1024;
export const ACTIVITY_DETAIL_MAX_BYTES = 4 * 1024;

type Fields = Record<string, unknown>;

function asFields(value: unknown): Fields | null {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Fields) : null;
}

function text(fields: Fields | null, ...keys: string[]): string | null {
  for (const key of keys) {
    const value = fields?.[key];
    if (typeof value === "string" && value !== "") return value;
  }
  return null;
}

/**
 * How a Cursor tool call shows up as an activity. The tool is named by the one key of `tool_call`
 * (`shellToolCall`, `readToolCall`, …), its input is that entry's `args`.
 */
export function describeCursorToolCall(key: string, args: unknown): { kind: Activity["kind"]; title: string } {
  const input = asFields(args);
  const name = key.endsWith("ToolCall") ? key.slice(0, -"ToolCall".length) : key;
  const titled = (kind: Activity["kind"], title: string | null) => ({
    kind,
    title: truncateUtf8(title ?? name, ACTIVITY_TITLE_MAX_BYTES).text,
  });
  switch (name) {
    case "shell":
      return titled("command", text(input, "command"));
    case "read":
      return titled("file-read", text(input, "path", "filePath"));
    case "write":
    case "edit":
    case "delete":
    case "applyPatch":
    case "editNotebook":
      return titled("file-edit", text(input, "path", "filePath", "targetFile"));
    case "webSearch":
      return titled("web-search", text(input, "searchTerm", "query"));
    case "webFetch":
      return titled("web-search", text(input, "url"));
    case "ls":
      return titled("tool", `ls ${text(input, "path") ?? "."}`);
    case "grep":
      return titled("tool", `grep ${text(input, "pattern") ?? ""}`.trim());
    case "glob":
      return titled("tool", `glob ${text(input, "globPattern", "pattern") ?? ""}`.trim());
    case "mcp":
      return titled("tool", text(input, "toolName", "name"));
    default:
      return titled("tool", name);
  }
}

/**
 * How a completed tool call ended. `result` holds one outcome key: `success` (for a shell command, with its exit code
 * and output), or a failure of some kind (`failure`, `error`, `rejected`, …) with a message.
 */
export function cursorToolOutcome(result: unknown): { failed: boolean; detail: string | undefined } {
  const outcome = asFields(result);
  if (outcome === null) return { failed: false, detail: undefined };
  const success = asFields(outcome.success);
  if (success !== null) {
    const output = `${text(success, "stdout") ?? ""}${text(success, "stderr") ?? ""}`;
    const exitCode = success.exitCode;
    return {
      failed: typeof exitCode === "number" && exitCode !== 0,
      detail: output === "" ? undefined : truncateUtf8(output, ACTIVITY_DETAIL_MAX_BYTES).text,
    };
  }
  const [failureKey, failureValue] = Object.entries(outcome).find(([key]) => key !== "isBackground") ?? ["", undefined];
  if (failureKey === "") return { failed: false, detail: undefined };
  const failure = asFields(failureValue);
  const message = text(failure, "message", "error", "reason", "stderr") ?? (typeof failureValue === "string" ? failureValue : `${failureKey}`);
  return { failed: true, detail: truncateUtf8(message, ACTIVITY_DETAIL_MAX_BYTES).text };
}
