import { useEffect, useRef } from "react";
import type { PedelecSession } from "../pedelec-session.js";
import type { ToolArgsFor, ToolHandler } from "../types.js";
import { useCommitEffect } from "./commit-effect.js";

/**
 * Answers the agent's calls of one tool with `handler` while the component is mounted: registered with
 * `session.onTool(name, …)` once the session exists, unregistered on unmount (or when the session or the name
 * changes). Each call runs the handler of the latest render, so it sees current props and state; a new function on
 * every render does not register again. `name` is limited to the session's declared tools, and the handler's arguments
 * are typed as `session.onTool(name, …)` types them: the schema's output for a tool declared with a Standard Schema
 * (`args`), `unknown` for one declared with `argsSchema`. Does nothing while `session` is null.
 *
 * @example
 * ```tsx
 * function Board({ session }: { session: PedelecSession<"add_note"> | null }) {
 *   const [notes, setNotes] = useState<string[]>([]);
 *   useTool(session, "add_note", (args) => {
 *     const { title } = args as { title: string };
 *     setNotes((current) => [...current, title]);
 *     return { saved: true, count: notes.length + 1 };
 *   });
 *   return <ul>{notes.map((note) => <li key={note}>{note}</li>)}</ul>;
 * }
 * ```
 */
export function useTool<TToolName extends string, TToolArgs, TName extends TToolName>(
  session: PedelecSession<TToolName, TToolArgs> | null | undefined,
  name: TName,
  handler: ToolHandler<TName, ToolArgsFor<TToolArgs, TName>>,
): void {
  const latest = useRef(handler);
  useCommitEffect(() => {
    latest.current = handler;
  });
  useEffect(() => {
    if (session === null || session === undefined) return;
    return session.onTool(name, (args, context) => latest.current(args, context));
  }, [session, name]);
}
