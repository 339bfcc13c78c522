import { defineTool, type ArgsSchemaNode } from "@kaoruisaac/pedelec";
import { isTodoColumn, TODO_COLUMNS, TODO_TITLE_MAX_LENGTH, type TodoCard, type TodoColumn, type TodoStore } from "./todo-store.js";

/** What the agent reads about this page in its first prompt. */
export const TODO_BOARD_GUIDANCE = [
  "You are helping the user with a to-do board shown in their browser page.",
  `The board has three columns: ${TODO_COLUMNS.map((column) => `"${column}"`).join(", ")} (in that order of progress).`,
  'Each card has an id (like "t3"), a title and the column it is in.',
  "Read the board with the list_todos tool before you change it, and refer to cards by their id.",
  "Add cards with add_todo and move them between columns with move_todo; there is no way to delete or rename a card.",
  "The board lives only in the page: use these tools, not files, to change it.",
  "After changing the board, tell the user in one or two sentences what you changed.",
].join("\n");

function columnSchema(description: string): ArgsSchemaNode {
  return { type: "string", enum: [...TODO_COLUMNS], description };
}

/** What one handled tool call did, for the page's own log. */
export type TodoToolCall =
  | { toolName: string; args: unknown; ok: true; result: unknown }
  | { toolName: string; args: unknown; ok: false; error: Error };

/**
 * The page's three frontend tools, bound to a store. Core checks arguments against each argsSchema, but the
 * handlers check them again: the arguments are written by an agent, and the page owns the board's safety.
 * `observe` sees every call and its outcome (it cannot change either).
 */
export function createTodoTools(store: TodoStore, observe?: (call: TodoToolCall) => void) {
  const observed =
    <TResult>(toolName: string, run: (args: unknown) => TResult) =>
    (args: unknown): TResult => {
      let result: TResult;
      try {
        result = run(args);
      } catch (error) {
        const failure = error instanceof Error ? error : new Error(String(error));
        report(observe, { toolName, args, ok: false, error: failure });
        throw failure;
      }
      report(observe, { toolName, args, ok: true, result });
      return result;
    };

  const listTodos = defineTool({
    name: "list_todos",
    description: "List every card on the to-do board: id, title and column.",
    argsSchema: { type: "object", properties: {}, additionalProperties: false },
    handler: observed("list_todos", (args): TodoCard[] => {
      readArgs("list_todos", args, []);
      return store.list();
    }),
  });

  const addTodo = defineTool({
    name: "add_todo",
    description: "Add a card to the to-do board and return it (with its new id).",
    argsSchema: {
      type: "object",
      properties: {
        title: {
          type: "string",
          minLength: 1,
          maxLength: TODO_TITLE_MAX_LENGTH,
          description: "What needs doing.",
          examples: ["Write the release notes"],
        },
        column: { ...columnSchema("The column to put the card in."), default: "todo" },
      },
      required: ["title"],
      additionalProperties: false,
    },
    handler: observed("add_todo", (args): TodoCard => {
      const fields = readArgs("add_todo", args, ["title", "column"]);
      const title = readTitle(fields.title);
      const column = fields.column === undefined ? "todo" : readColumn("add_todo", fields.column);
      return store.add({ title, column });
    }),
  });

  const moveTodo = defineTool({
    name: "move_todo",
    description: "Move a card, given by its id, to another column of the to-do board and return it.",
    argsSchema: {
      type: "object",
      properties: {
        id: { type: "string", minLength: 1, description: "The card's id, as list_todos returns it.", examples: ["t1"] },
        column: columnSchema("The column to move the card to."),
      },
      required: ["id", "column"],
      additionalProperties: false,
    },
    handler: observed("move_todo", (args): TodoCard => {
      const fields = readArgs("move_todo", args, ["id", "column"]);
      const id = fields.id;
      if (typeof id !== "string" || id.length === 0) {
        throw new Error(`move_todo: "id" must be a card id string, got ${describe(id)}`);
      }
      const column = readColumn("move_todo", fields.column);
      if (store.get(id) === undefined) {
        throw new Error(`move_todo: no card has the id "${id}"; call list_todos to see the ids`);
      }
      return store.move(id, column);
    }),
  });

  return [listTodos, addTodo, moveTodo] as const;
}

function report(observe: ((call: TodoToolCall) => void) | undefined, call: TodoToolCall): void {
  try {
    observe?.(call);
  } catch {
    // A failing log line must not turn a good answer to the agent into an error.
  }
}

/** Checks that args is a plain object with only the allowed keys (null and arrays are not arguments). */
function readArgs(toolName: string, args: unknown, allowed: readonly string[]): Record<string, unknown> {
  if (args === undefined) return {};
  if (typeof args !== "object" || args === null || Array.isArray(args)) {
    throw new Error(`${toolName}: the arguments must be a JSON object, got ${describe(args)}`);
  }
  const fields = args as Record<string, unknown>;
  const unknownKeys = Object.keys(fields).filter((key) => !allowed.includes(key));
  if (unknownKeys.length > 0) {
    const accepted = allowed.length === 0 ? "it takes no arguments" : `it accepts ${allowed.map((key) => `"${key}"`).join(", ")}`;
    throw new Error(`${toolName}: unknown argument ${unknownKeys.map((key) => `"${key}"`).join(", ")}; ${accepted}`);
  }
  return fields;
}

function readTitle(value: unknown): string {
  if (typeof value !== "string") throw new Error(`add_todo: "title" must be a string, got ${describe(value)}`);
  const title = value.trim();
  if (title.length === 0) throw new Error(`add_todo: "title" must not be empty`);
  if (title.length > TODO_TITLE_MAX_LENGTH) {
    throw new Error(`add_todo: "title" must have at most ${TODO_TITLE_MAX_LENGTH} characters, got ${title.length}`);
  }
  return title;
}

function readColumn(toolName: string, value: unknown): TodoColumn {
  if (isTodoColumn(value)) return value;
  const allowed = TODO_COLUMNS.map((column) => `"${column}"`).join(", ");
  throw new Error(`${toolName}: "column" must be one of ${allowed}, got ${describe(value)}`);
}

/** A short description of an untrusted value for an error message (never the whole value). */
function describe(value: unknown): string {
  if (value === undefined) return "nothing";
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "string") return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (typeof value === "object") return "an object";
  return `${typeof value} ${String(value)}`;
}
