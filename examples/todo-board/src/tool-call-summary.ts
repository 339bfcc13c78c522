import type { TodoToolCall } from "./todo-tools.js";

const MAX_ARGS_LENGTH = 120;

/** One line about a tool call the page answered, e.g. `add_todo {"title":"Milk"} → t4 (todo)`. */
export function summarizeToolCall(call: TodoToolCall): string {
  const args = compactJson(call.args);
  const head = args === "" ? call.toolName : `${call.toolName} ${args}`;
  if (!call.ok) {
    // Handler messages name their tool for the agent's sake; the line already does.
    const message = call.error.message.startsWith(`${call.toolName}: `) ? call.error.message.slice(call.toolName.length + 2) : call.error.message;
    return `${head} failed: ${message}`;
  }
  const result = call.result;
  if (Array.isArray(result)) return `${head} → ${result.length} card${result.length === 1 ? "" : "s"}`;
  if (typeof result === "object" && result !== null && "id" in result && "column" in result) {
    return `${head} → ${String(result.id)} (${String(result.column)})`;
  }
  return `${head} → done`;
}

function compactJson(value: unknown): string {
  if (value === undefined) return "";
  let text: string;
  try {
    text = JSON.stringify(value) ?? "";
  } catch {
    return "(arguments that are not JSON)";
  }
  if (text === "{}") return "";
  return text.length > MAX_ARGS_LENGTH ? `${text.slice(0, MAX_ARGS_LENGTH)}…` : text;
}
