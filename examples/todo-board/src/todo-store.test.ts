import { describe, expect, it } from "vitest";
import { createTodoStore, isTodoColumn, type TodoCard } from "./todo-store.js";

describe("createTodoStore", () => {
  it("starts with the seed cards, numbered in order", () => {
    const store = createTodoStore([{ title: "First" }, { title: "Second", column: "done" }]);
    expect(store.list()).toEqual([
      { id: "t1", title: "First", column: "todo" },
      { id: "t2", title: "Second", column: "done" },
    ]);
  });

  it("adds a card with a fresh id, trimmed title and default column", () => {
    const store = createTodoStore([{ title: "Seed" }]);
    const card = store.add({ title: "  Buy milk  " });
    expect(card).toEqual({ id: "t2", title: "Buy milk", column: "todo" });
    expect(store.get("t2")).toEqual(card);
    expect(store.add({ title: "Ship", column: "doing" })).toEqual({ id: "t3", title: "Ship", column: "doing" });
  });

  it("refuses an empty or over-long title and an unknown column, leaving the board unchanged", () => {
    const store = createTodoStore();
    expect(() => store.add({ title: "   " })).toThrow(/1–200 characters/);
    expect(() => store.add({ title: "x".repeat(201) })).toThrow(/1–200 characters/);
    expect(() => store.add({ title: "Fine", column: "later" as never })).toThrow(/Unknown column "later"/);
    expect(store.list()).toEqual([]);
    expect(store.add({ title: "x".repeat(200) }).id).toBe("t1");
  });

  it("moves a card and refuses unknown ids and columns", () => {
    const store = createTodoStore([{ title: "A" }]);
    expect(store.move("t1", "doing")).toEqual({ id: "t1", title: "A", column: "doing" });
    expect(store.get("t1")?.column).toBe("doing");
    expect(() => store.move("t9", "done")).toThrow(/No card has the id "t9"/);
    expect(() => store.move("t1", "archive" as never)).toThrow(/Unknown column "archive"/);
    expect(store.get("t1")?.column).toBe("doing");
  });

  it("tells listeners about every change with the full list, and stops after unsubscribe", () => {
    const store = createTodoStore([{ title: "A" }]);
    const seen: TodoCard[][] = [];
    const unsubscribe = store.onChange((cards) => seen.push(cards));
    store.add({ title: "B" });
    store.move("t1", "done");
    store.move("t1", "done"); // no change, no notification
    unsubscribe();
    store.add({ title: "C" });
    expect(seen).toHaveLength(2);
    expect(seen[0]?.map((card) => card.id)).toEqual(["t1", "t2"]);
    expect(seen[1]?.find((card) => card.id === "t1")?.column).toBe("done");
  });

  it("hands out copies, so callers cannot change the board behind its back", () => {
    const store = createTodoStore([{ title: "A" }]);
    const [card] = store.list();
    (card as { title: string }).title = "changed";
    const fetched = store.get("t1");
    (fetched as { column: string }).column = "done";
    expect(store.get("t1")).toEqual({ id: "t1", title: "A", column: "todo" });
  });

  it("knows its columns", () => {
    expect(["todo", "doing", "done"].every(isTodoColumn)).toBe(true);
    expect([undefined, null, 1, "Todo", "archive"].some(isTodoColumn)).toBe(false);
  });
});
