import type { ToolDefinition } from "./types.js";

/**
 * Declares a frontend tool. It returns its input unchanged; its purpose is to keep the name's literal type,
 * so `createSession({ skills: { tools: [tool] } })` yields a session whose `onTool(name, …)` only accepts
 * declared names. Validation happens in `createSession()` (never at import time).
 *
 * @example
 * ```ts
 * const addTodo = defineTool({
 *   name: "add_todo",
 *   description: "Add an item to the todo list.",
 *   argsSchema: { type: "object", properties: { title: { type: "string" } }, required: ["title"] },
 * });
 * const session = await pedelec.createSession({ skills: { guidance: "", tools: [addTodo] } });
 * session.onTool("add_todo", (args) => ({ added: args }));
 * ```
 */
export function defineTool<const TToolName extends string>(tool: ToolDefinition<TToolName>): ToolDefinition<TToolName> {
  return tool;
}
