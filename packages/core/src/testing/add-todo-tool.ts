/** The page tool session tests offer their agent: adds a card, whose title may not be empty. */
export function addTodoTool(timeoutMs: number) {
  return {
    name: "add_todo",
    description: "Add a card",
    argsSchema: { type: "object" as const, properties: { title: { type: "string" as const, minLength: 1 } }, required: ["title"] },
    timeoutMs,
  };
}
