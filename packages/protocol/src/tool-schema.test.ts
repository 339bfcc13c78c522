import { describe, expect, it } from "vitest";
import { MAX_MANIFEST_SCHEMA_VALUES, skillsManifestSchema, toolArgsSchemaSchema } from "./tool-schema.js";

function manifestWith(argsSchema: unknown, name = "add_todo") {
  return {
    guidance: "",
    tools: [
      { name: "list_todos", description: "List", argsSchema: { type: "object" } },
      { name, description: "Add", argsSchema },
    ],
  };
}

function issuesOf(manifest: unknown) {
  const parsed = skillsManifestSchema.safeParse(manifest);
  if (parsed.success) throw new Error("expected the manifest to be refused");
  return parsed.error.issues.map((issue) => ({ path: issue.path, message: issue.message }));
}

describe("patterns in a skills manifest", () => {
  it("refuses a back-reference, naming the tool and the field", () => {
    const issues = issuesOf(manifestWith({ type: "object", properties: { title: { type: "string", pattern: "(a)\\1" } } }));
    expect(issues).toEqual([
      {
        path: ["tools", 1],
        message: expect.stringMatching(
          /^tool add_todo: argsSchema\.properties\.title\.pattern "\(a\)\\\\1" is not supported: back-references need a backtracking engine/,
        ) as string,
      },
    ]);
  });

  it("finds patterns under items, oneOf and nested objects", () => {
    const deep = {
      type: "object",
      properties: {
        tags: { type: "array", items: { type: "string", pattern: "^[a-z]+$" } },
        target: { oneOf: [{ type: "number" }, { type: "object", properties: { id: { type: "string", pattern: "^(?=x)" } } }] },
      },
    };
    expect(issuesOf(manifestWith(deep))).toEqual([
      {
        path: ["tools", 1],
        message: expect.stringMatching(
          /^tool add_todo: argsSchema\.properties\.target\.oneOf\.1\.properties\.id\.pattern "\^\(\?=x\)" is not supported: look-ahead/,
        ) as string,
      },
    ]);
  });

  it("accepts linear patterns, including the catastrophic-backtracking ones a backtracking engine cannot bear", () => {
    const argsSchema = {
      type: "object",
      properties: { s: { type: "string", pattern: "^(a+)+$" }, t: { type: "string", pattern: "^[\\u4e00-\\u9fff]+$" } },
    };
    expect(skillsManifestSchema.safeParse(manifestWith(argsSchema)).success).toBe(true);
  });

  it("reports an invalid regular expression once, at its field", () => {
    const issues = issuesOf(manifestWith({ type: "object", properties: { title: { type: "string", pattern: "(" } } }));
    expect(issues).toEqual([{ path: ["tools", 1, "argsSchema", "properties", "title", "pattern"], message: "is not a valid regular expression" }]);
  });

  it("leaves a lone argsSchema to structure and syntax checks", () => {
    expect(toolArgsSchemaSchema.safeParse({ type: "object", properties: { s: { type: "string", pattern: "(a)\\1" } } }).success).toBe(true);
    expect(toolArgsSchemaSchema.safeParse({ type: "object", properties: { s: { type: "string", pattern: "(" } } }).success).toBe(false);
  });

  it("bounds the schema work one manifest can make Core do, across all its tools", () => {
    // Each property below is 3 values: the property's object, its type and its maxLength.
    const toolWith = (name: string, properties: number) => ({
      name,
      description: "Wide",
      argsSchema: {
        type: "object",
        properties: Object.fromEntries(Array.from({ length: properties }, (_, index) => [`p${index}`, { type: "string", maxLength: 9 }])),
      },
    });
    const perTool = Math.floor(MAX_MANIFEST_SCHEMA_VALUES / 2 / 3) - 1;
    expect(skillsManifestSchema.safeParse({ guidance: "", tools: [toolWith("a", perTool), toolWith("b", perTool)] }).success).toBe(true);
    const refused = skillsManifestSchema.safeParse({ guidance: "", tools: [toolWith("a", perTool), toolWith("b", perTool), toolWith("c", 10)] });
    expect(refused.success).toBe(false);
    expect(refused.error?.issues[0]?.message).toContain(`at most ${MAX_MANIFEST_SCHEMA_VALUES} JSON values`);
  });
});

describe("enums in an argsSchema", () => {
  // Core's Ajv refuses such a schema against its meta-schema; the page must refuse it first (found by the args-schema
  // parity fuzzer, seed 727446928).
  it("refuses an enum that repeats a value, of strings or of numbers", () => {
    const withEnum = (property: unknown) => ({ type: "object", properties: { p: property } });
    expect(toolArgsSchemaSchema.safeParse(withEnum({ type: "string", enum: ["a", "b"] })).success).toBe(true);
    expect(toolArgsSchemaSchema.safeParse(withEnum({ type: "string", enum: ["a", "a"] })).success).toBe(false);
    expect(toolArgsSchemaSchema.safeParse(withEnum({ type: "number", enum: [0, 1] })).success).toBe(true);
    const repeated = toolArgsSchemaSchema.safeParse(withEnum({ type: "integer", enum: [0, -0] }));
    expect(repeated.error?.issues.map((issue) => issue.message)).toContain("must not repeat a value");
  });
});
