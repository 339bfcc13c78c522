import { describe, expect, it } from "vitest";
import { MAX_JSON_DEPTH, MAX_TOOL_ARGS_BYTES } from "@pedelec/protocol/json-limits";
import type { PedelecError } from "@pedelec/protocol/pedelec-error";
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

describe("ToolRegistry patterns", () => {
  const patterned = new ToolRegistry([
    {
      name: "check",
      description: "Patterns from a page",
      argsSchema: {
        type: "object",
        properties: {
          s: { type: "string", pattern: "^(a+)+$" },
          x: { type: "string", pattern: "^x$" },
          y: { type: "string", pattern: "^y$" },
          z: { type: "string", pattern: "b" },
        },
      },
    },
  ]);

  it("checks a catastrophic-backtracking pattern at once (a backtracking engine would take minutes)", () => {
    const started = performance.now();
    expect(() => patterned.parseArgs("check", JSON.stringify({ s: `${"a".repeat(32)}!` }))).toThrowError(
      expect.objectContaining({ code: "TOOL_ARGS_INVALID", message: expect.stringContaining('/s must match pattern "^(a+)+$"') as string }) as Error,
    );
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(patterned.parseArgs("check", JSON.stringify({ s: "a".repeat(32) }))).toEqual({ s: "a".repeat(32) });
  });

  it("keeps each pattern apart and searches unanchored, as JSON Schema does", () => {
    expect(patterned.parseArgs("check", '{"x":"x","y":"y","z":"abc"}')).toEqual({ x: "x", y: "y", z: "abc" });
    expect(() => patterned.parseArgs("check", '{"x":"y","y":"x"}')).toThrowError(
      expect.objectContaining({
        message: expect.stringMatching(/\/x must match pattern "\^x\$"; \/y must match pattern "\^y\$"/) as string,
      }) as Error,
    );
  });

  it("refuses a value too long to check within the matching budget, as TOOL_ARGS_INVALID", () => {
    expect(() => patterned.parseArgs("check", JSON.stringify({ s: "a".repeat(2_000_000) }))).toThrowError(
      expect.objectContaining({
        code: "TOOL_ARGS_INVALID",
        message: expect.stringContaining("too long to check against pattern") as string,
      }) as Error,
    );
  });

  it("refuses a pattern the linear-time engine cannot run, naming the tool", () => {
    const build = () =>
      new ToolRegistry([
        { name: "bad", description: "Bad", argsSchema: { type: "object", properties: { s: { type: "string", pattern: "(a)\\1" } } } },
      ]);
    expect(build).toThrowError(
      expect.objectContaining({
        code: "INVALID_INPUT",
        message: expect.stringMatching(/^tool bad: argsSchema is not usable: pattern "\(a\)\\\\1" is not supported: back-references/) as string,
      }) as Error,
    );
  });
});

describe("ToolRegistry argument limits", () => {
  const open = new ToolRegistry([{ name: "take", description: "Takes anything", argsSchema: { type: "object" } }]);

  it("refuses arguments nested deeper than MAX_JSON_DEPTH, naming where without quoting them", () => {
    const deep = `{"secret_key":${'{"a":'.repeat(8_000)}1${"}".repeat(8_000)}}`;
    expect(() => open.parseArgs("take", deep)).toThrowError(
      expect.objectContaining({
        code: "TOOL_ARGS_INVALID",
        message: expect.stringMatching(
          new RegExp(`^arguments for take are refused: the value at secret_key\\.a\\.a\\..*nests deeper than ${MAX_JSON_DEPTH} levels$`),
        ) as string,
      }) as Error,
    );
    const fits = `${'{"a":'.repeat(MAX_JSON_DEPTH)}1${"}".repeat(MAX_JSON_DEPTH)}`;
    expect(open.parseArgs("take", fits)).toBeTypeOf("object");
  });

  it("refuses arguments that take more than MAX_TOOL_ARGS_BYTES once written out again", () => {
    const inflating = `{"list":[${new Array(400_000).fill("1e20").join(",")}]}`;
    expect(inflating.length).toBeLessThan(MAX_TOOL_ARGS_BYTES);
    expect(() => open.parseArgs("take", inflating)).toThrowError(expect.objectContaining({ code: "TOOL_ARGS_INVALID" }) as Error);
  });

  it("reports a few schema problems and counts the rest, so the message stays short", () => {
    const unknownKeys = Object.fromEntries(Array.from({ length: 10_000 }, (_, index) => [`extra_${"x".repeat(500)}_${index}`, index]));
    let thrown: unknown;
    try {
      registry.parseArgs("add_todo", JSON.stringify({ title: "x", ...unknownKeys }));
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toMatchObject({ code: "TOOL_ARGS_INVALID", details: { problemCount: 10_000 } });
    expect(JSON.stringify((thrown as PedelecError).toWire()).length).toBeLessThan(2048);
  });
});
