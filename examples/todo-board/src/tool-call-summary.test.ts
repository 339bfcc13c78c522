import { describe, expect, it } from "vitest";
import { summarizeToolCall } from "./tool-call-summary.js";

describe("summarizeToolCall", () => {
  it("describes answered and failed calls", () => {
    expect(summarizeToolCall({ toolName: "list_todos", args: {}, ok: true, result: [{}, {}] })).toBe("list_todos → 2 cards");
    expect(summarizeToolCall({ toolName: "add_todo", args: { title: "Milk" }, ok: true, result: { id: "t4", title: "Milk", column: "todo" } })).toBe(
      'add_todo {"title":"Milk"} → t4 (todo)',
    );
    expect(summarizeToolCall({ toolName: "move_todo", args: { id: "x" }, ok: false, error: new Error("no card") })).toBe(
      'move_todo {"id":"x"} failed: no card',
    );
    expect(summarizeToolCall({ toolName: "move_todo", args: {}, ok: false, error: new Error('move_todo: "id" must be a card id string') })).toBe(
      'move_todo failed: "id" must be a card id string',
    );
  });

  it("shortens long arguments", () => {
    const summary = summarizeToolCall({ toolName: "add_todo", args: { title: "x".repeat(500) }, ok: false, error: new Error("too long") });
    expect(summary.length).toBeLessThan(200);
    expect(summary).toContain("…");
  });
});
