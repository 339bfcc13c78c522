import { describe, expect, it } from "vitest";
import { ToolRegistry } from "./tool-registry.js";

const registry = new ToolRegistry([
  {
    name: "add_todo",
    description: "Add a card",
    argsSchema: {
      type: "object",
      properties: {
        title: { type: "string", minLength: 1, maxLength: 20 },
        column: { type: "string", enum: ["todo", "done"] },
      },
      required: ["title"],
      additionalProperties: false,
    },
    timeoutMs: 500,
  },
  { name: "list_todos", description: "List cards", argsSchema: { type: "object" } },
]);

describe("ToolRegistry", () => {
  it("parses and validates arguments", () => {
    expect(registry.parseArgs("add_todo", '{"title":"Milk","column":"todo"}')).toEqual({ title: "Milk", column: "todo" });
  });

  it("defaults the timeout to 60 s", () => {
    expect(registry.get("list_todos").timeoutMs).toBe(60_000);
    expect(registry.get("add_todo").timeoutMs).toBe(500);
  });

  it.each([
    ['{"column":"todo"}', "required"],
    ['{"title":""}', "fewer than 1"],
    ['{"title":"x","column":"later"}', "allowed values"],
    ['{"title":"x","extra":1}', "additional"],
    ['{"title":', "not valid JSON"],
    ["[1,2]", "must be object"],
  ])("rejects %s with TOOL_ARGS_INVALID (%s)", (argsJson, fragment) => {
    expect(() => registry.parseArgs("add_todo", argsJson)).toThrowError(
      expect.objectContaining({ code: "TOOL_ARGS_INVALID", message: expect.stringContaining(fragment) as string }) as Error,
    );
  });

  it("answers an unknown tool with TOOL_NOT_FOUND naming the known ones", () => {
    expect(() => registry.get("delete_all")).toThrowError(
      expect.objectContaining({ code: "TOOL_NOT_FOUND", message: expect.stringContaining("add_todo, list_todos") as string }) as Error,
    );
  });
});
