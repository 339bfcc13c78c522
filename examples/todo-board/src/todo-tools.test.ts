import type { ToolDefinition, ToolHandlerContext } from "@kaoruisaac/pedelec";
import { describe, expect, it } from "vitest";
import { createTodoStore } from "./todo-store.js";
import { createTodoTools, TODO_BOARD_GUIDANCE, type TodoToolCall } from "./todo-tools.js";

function setup() {
  const store = createTodoStore([{ title: "Write docs" }, { title: "Fix bug", column: "doing" }]);
  const calls: TodoToolCall[] = [];
  const [listTodos, addTodo, moveTodo] = createTodoTools(store, (call) => calls.push(call));
  return { store, calls, listTodos, addTodo, moveTodo };
}

function call(tool: ToolDefinition, args: unknown): unknown {
  const context: ToolHandlerContext = {
    toolName: tool.name,
    toolRequestId: "request-1",
    turnId: "turn-1",
    sessionId: "session-1",
    provider: "claude",
    source: "core",
    eventEmittedAt: "2026-01-01T00:00:00.000Z",
    signal: new AbortController().signal,
  };
  if (tool.handler === undefined) throw new Error(`${tool.name} has no handler`);
  return tool.handler(args, context);
}

describe("todo tools", () => {
  it("declares the three tools with object argument schemas", () => {
    const { listTodos, addTodo, moveTodo } = setup();
    expect([listTodos.name, addTodo.name, moveTodo.name]).toEqual(["list_todos", "add_todo", "move_todo"]);
    expect(addTodo.argsSchema?.required).toEqual(["title"]);
    expect(moveTodo.argsSchema?.required).toEqual(["id", "column"]);
    for (const tool of [listTodos, addTodo, moveTodo]) {
      expect(tool.argsSchema?.type).toBe("object");
      expect(TODO_BOARD_GUIDANCE).toContain(tool.name);
    }
  });

  describe("list_todos", () => {
    it("returns the cards", () => {
      const { listTodos } = setup();
      expect(call(listTodos, {})).toEqual([
        { id: "t1", title: "Write docs", column: "todo" },
        { id: "t2", title: "Fix bug", column: "doing" },
      ]);
    });

    it.each([
      [null, /must be a JSON object, got null/],
      [[], /must be a JSON object, got an array/],
      ["all", /must be a JSON object, got "all"/],
      [{ column: "todo" }, /unknown argument "column"; it takes no arguments/],
    ])("refuses %j", (args, message) => {
      const { listTodos } = setup();
      expect(() => call(listTodos, args)).toThrow(message);
    });
  });

  describe("add_todo", () => {
    it("adds a card to todo by default, or to the given column, and returns it", () => {
      const { store, addTodo } = setup();
      expect(call(addTodo, { title: "Buy milk" })).toEqual({ id: "t3", title: "Buy milk", column: "todo" });
      expect(call(addTodo, { title: " Ship it ", column: "done" })).toEqual({ id: "t4", title: "Ship it", column: "done" });
      expect(store.list()).toHaveLength(4);
      expect(store.get("t4")?.column).toBe("done");
    });

    it("accepts a 200-character title", () => {
      const { addTodo } = setup();
      expect(call(addTodo, { title: "x".repeat(200) })).toMatchObject({ id: "t3" });
    });

    it.each([
      [{}, /"title" must be a string, got nothing/],
      [undefined, /"title" must be a string, got nothing/],
      [{ title: 42 }, /"title" must be a string, got number 42/],
      [{ title: null }, /"title" must be a string, got null/],
      [{ title: ["a"] }, /"title" must be a string, got an array/],
      [{ title: "" }, /"title" must not be empty/],
      [{ title: "   \n " }, /"title" must not be empty/],
      [{ title: "x".repeat(201) }, /at most 200 characters, got 201/],
      [{ title: "ok", column: "later" }, /"column" must be one of "todo", "doing", "done", got "later"/],
      [{ title: "ok", column: null }, /"column" must be one of .*got null/],
      [{ title: "ok", priority: 1 }, /unknown argument "priority"; it accepts "title", "column"/],
      [42, /must be a JSON object, got number 42/],
    ])("refuses %j without changing the board", (args, message) => {
      const { store, addTodo } = setup();
      expect(() => call(addTodo, args)).toThrow(message);
      expect(store.list()).toHaveLength(2);
    });
  });

  describe("move_todo", () => {
    it("moves the card and returns it", () => {
      const { store, moveTodo } = setup();
      expect(call(moveTodo, { id: "t1", column: "done" })).toEqual({ id: "t1", title: "Write docs", column: "done" });
      expect(store.get("t1")?.column).toBe("done");
    });

    it.each([
      [{ column: "done" }, /"id" must be a card id string, got nothing/],
      [{ id: 1, column: "done" }, /"id" must be a card id string, got number 1/],
      [{ id: "", column: "done" }, /"id" must be a card id string, got ""/],
      [{ id: "t1" }, /"column" must be one of .*got nothing/],
      [{ id: "t1", column: "DONE" }, /"column" must be one of .*got "DONE"/],
      [{ id: "t99", column: "done" }, /no card has the id "t99"; call list_todos/],
      [{ id: "t1", column: "done", force: true }, /unknown argument "force"/],
    ])("refuses %j without changing the board", (args, message) => {
      const { store, moveTodo } = setup();
      expect(() => call(moveTodo, args)).toThrow(message);
      expect(store.list().map((card) => card.column)).toEqual(["todo", "doing"]);
    });
  });

  it("reports each call and its outcome to the observer, and a throwing observer changes nothing", () => {
    const { calls, addTodo, moveTodo } = setup();
    call(addTodo, { title: "Plan" });
    expect(() => call(moveTodo, { id: "nope", column: "done" })).toThrow();
    expect(calls).toEqual([
      { toolName: "add_todo", args: { title: "Plan" }, ok: true, result: { id: "t3", title: "Plan", column: "todo" } },
      expect.objectContaining({ toolName: "move_todo", ok: false, error: expect.any(Error) }),
    ]);

    const store = createTodoStore();
    const [, quietAdd] = createTodoTools(store, () => {
      throw new Error("log failed");
    });
    expect(call(quietAdd, { title: "Still works" })).toMatchObject({ id: "t1" });
  });
});
