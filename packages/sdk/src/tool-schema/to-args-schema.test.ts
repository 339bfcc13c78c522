import { toJsonSchema, toStandardJsonSchema } from "@valibot/to-json-schema";
import { type } from "arktype";
import * as v from "valibot";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ToolRegistry } from "@pedelec/core/tool-registry";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import type { ObjectSchemaNode } from "@pedelec/protocol/tool-schema";
import { prepareCreateSession } from "../create-session-input.js";
import { defineTool } from "../define-tool.js";
import type { ToolDefinition } from "../types.js";

/** The argsSchema createSession sends to Core for one tool. */
function sentSchema(tool: ToolDefinition): ObjectSchemaNode {
  const { payload } = prepareCreateSession({ skills: { guidance: "", tools: [tool] } });
  const [entry] = payload.skills!.tools;
  expect(Object.keys(entry!).sort()).toEqual(["argsSchema", "description", "name"]);
  return entry!.argsSchema as ObjectSchemaNode;
}

/** Whether Core's validator (Ajv, strict) accepts the arguments. */
function coreAccepts(schema: ObjectSchemaNode, args: unknown): boolean {
  const registry = new ToolRegistry([{ name: "probe", description: "probe", argsSchema: schema }]);
  try {
    registry.parseArgs("probe", JSON.stringify(args));
    return true;
  } catch (error) {
    expect(error).toMatchObject({ code: "TOOL_ARGS_INVALID" });
    return false;
  }
}

/** The refusal defineTool throws, as a PedelecError. */
function refusal(define: () => unknown): PedelecError {
  try {
    define();
  } catch (error) {
    expect(error).toBeInstanceOf(PedelecError);
    expect((error as PedelecError).code).toBe("INVALID_INPUT");
    return error as PedelecError;
  }
  throw new Error("defineTool accepted the schema");
}

// Every node of the subset, as each library writes it.
const EXPECTED: ObjectSchemaNode = {
  type: "object",
  properties: {
    title: { type: "string", minLength: 1, maxLength: 80, description: "The note's title" },
    kind: { type: "string", enum: ["idea", "task"] },
    priority: { type: "integer", minimum: 1, maximum: 5 },
    weight: { type: "number", minimum: 0, maximum: 1.5 },
    done: { type: "boolean" },
    tags: { type: "array", items: { type: "string", maxLength: 20 }, minItems: 1, maxItems: 3 },
    author: {
      type: "object",
      properties: { name: { type: "string" }, email: { type: "string", description: "Where to reach them" } },
      required: ["name"],
    },
    body: { type: "string" },
  },
  required: ["title", "kind", "priority", "weight", "done", "tags", "author"],
};

const zodNote = z.object({
  title: z.string().min(1).max(80).describe("The note's title"),
  kind: z.enum(["idea", "task"]),
  priority: z.number().int().min(1).max(5),
  weight: z.number().min(0).max(1.5),
  done: z.boolean(),
  tags: z.array(z.string().max(20)).min(1).max(3),
  author: z.object({ name: z.string(), email: z.string().describe("Where to reach them").optional() }),
  body: z.string().optional(),
});

const valibotNote = v.object({
  title: v.pipe(v.string(), v.minLength(1), v.maxLength(80), v.description("The note's title")),
  kind: v.picklist(["idea", "task"]),
  priority: v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(5)),
  weight: v.pipe(v.number(), v.minValue(0), v.maxValue(1.5)),
  done: v.boolean(),
  tags: v.pipe(v.array(v.pipe(v.string(), v.maxLength(20))), v.minLength(1), v.maxLength(3)),
  author: v.object({ name: v.string(), email: v.optional(v.pipe(v.string(), v.description("Where to reach them"))) }),
  body: v.optional(v.string()),
});

const arktypeNote = type({
  title: type("1 <= string <= 80").describe("The note's title"),
  kind: "'idea' | 'task'",
  priority: "1 <= number.integer <= 5",
  weight: "0 <= number <= 1.5",
  done: "boolean",
  tags: "(string <= 20)[] >= 1",
  author: { name: "string", "email?": type("string").describe("Where to reach them") },
  "body?": "string",
});

const VALID = {
  title: "Milk",
  kind: "task",
  priority: 2,
  weight: 1.5,
  done: false,
  tags: ["shopping"],
  author: { name: "Ann" },
};
const INVALID: readonly unknown[] = [
  { ...VALID, title: "" },
  { ...VALID, title: "x".repeat(81) },
  { ...VALID, kind: "chore" },
  { ...VALID, priority: 2.5 },
  { ...VALID, priority: 6 },
  { ...VALID, weight: -1 },
  { ...VALID, done: "no" },
  { ...VALID, tags: [] },
  { ...VALID, tags: ["a", "b", "c", "d"] },
  { ...VALID, tags: ["x".repeat(21)] },
  { ...VALID, author: {} },
  { ...VALID, author: { name: "Ann", email: 3 } },
  { ...VALID, body: 42 },
  (({ title: _title, ...rest }) => rest)(VALID),
];

describe("Standard Schema tools become argsSchema", () => {
  it.each([
    ["zod", () => defineTool({ name: "add_note", description: "Add a note.", args: zodNote })],
    ["valibot (toStandardJsonSchema)", () => defineTool({ name: "add_note", description: "Add a note.", args: toStandardJsonSchema(valibotNote) })],
    [
      "valibot (jsonSchema option)",
      () =>
        defineTool({ name: "add_note", description: "Add a note.", args: valibotNote, jsonSchema: toJsonSchema(valibotNote, { typeMode: "input" }) }),
    ],
  ])("converts every supported node from %s", async (_library, define) => {
    const tool = define();
    const schema = sentSchema(tool);
    expect(schema).toEqual(EXPECTED);
    // The converted schema means what the library's schema means, for Core as for the library.
    expect(coreAccepts(schema, VALID)).toBe(true);
    expect((await tool.args!["~standard"].validate(VALID)).issues).toBeUndefined();
    for (const args of INVALID) {
      expect(coreAccepts(schema, args), JSON.stringify(args)).toBe(false);
      expect((await tool.args!["~standard"].validate(args)).issues, JSON.stringify(args)).toBeDefined();
    }
  });

  it("converts arktype's schema, whose arrays it bounds below only", () => {
    const schema = sentSchema(defineTool({ name: "add_note", description: "Add a note.", args: arktypeNote }));
    const tags = { type: "array", items: { type: "string", maxLength: 20 }, minItems: 1 };
    // arktype lists required names in alphabetical order.
    expect({ ...schema, required: [...schema.required!].sort() }).toEqual({
      ...EXPECTED,
      properties: { ...EXPECTED.properties, tags },
      required: [...EXPECTED.required!].sort(),
    });
    expect(coreAccepts(schema, VALID)).toBe(true);
    expect(coreAccepts(schema, { ...VALID, kind: "chore" })).toBe(false);
    expect(coreAccepts(schema, { ...VALID, author: { name: "Ann", email: 3 } })).toBe(false);
  });

  it("keeps strict objects strict, drops annotations the subset has no room for, and keeps defaults and examples", () => {
    const args = z.strictObject({
      title: z.string().meta({ title: "Title", examples: ["Milk"], deprecated: true }),
      count: z.number().int().default(1),
    });
    expect(sentSchema(defineTool({ name: "strict", description: "Strict.", args }))).toEqual({
      type: "object",
      properties: {
        title: { type: "string", examples: ["Milk"] },
        count: { type: "integer", minimum: -9007199254740991, maximum: 9007199254740991, default: 1 },
      },
      required: ["title"],
      additionalProperties: false,
    });
  });

  it("rewrites what has an exact equivalent: literals, strict integer bounds, unions that cannot overlap", () => {
    const args = z.object({
      mode: z.literal("fast"),
      level: z.literal(3),
      positive: z.int().positive(),
      below: z.int().lt(10),
      value: z.union([z.string(), z.number()]),
      action: z.discriminatedUnion("kind", [
        z.object({ kind: z.literal("add"), title: z.string() }),
        z.object({ kind: z.literal("remove"), id: z.int().min(0) }),
      ]),
      email: z.email(),
    });
    const schema = sentSchema(defineTool({ name: "rewrites", description: "Rewrites.", args }));
    expect(schema.properties).toMatchObject({
      mode: { type: "string", enum: ["fast"] },
      level: { type: "number", enum: [3] },
      positive: { type: "integer", minimum: 1 },
      below: { type: "integer", maximum: 9 },
      value: { oneOf: [{ type: "string" }, { type: "number" }] },
      action: {
        oneOf: [
          { type: "object", required: ["kind", "title"] },
          { type: "object", required: ["kind", "id"] },
        ],
      },
    });
    // z.email() writes its pattern next to the format name: the pattern is the check, and it is kept.
    expect(schema.properties!.email).toEqual({ type: "string", pattern: expect.any(String) });
    expect(coreAccepts(schema, { mode: "fast", level: 3, positive: 1, below: 9, value: 2, action: { kind: "remove", id: 1 }, email: "a@b.co" })).toBe(
      true,
    );
    expect(coreAccepts(schema, { mode: "fast", level: 3, positive: 0, below: 9, value: 2, action: { kind: "remove", id: 1 }, email: "a@b.co" })).toBe(
      false,
    );
    expect(
      coreAccepts(schema, { mode: "fast", level: 3, positive: 1, below: 9, value: true, action: { kind: "remove", id: 1 }, email: "a@b.co" }),
    ).toBe(false);
    expect(coreAccepts(schema, { mode: "fast", level: 3, positive: 1, below: 9, value: 2, action: { kind: "add", id: 1 }, email: "a@b.co" })).toBe(
      false,
    );
    expect(coreAccepts(schema, { mode: "fast", level: 3, positive: 1, below: 9, value: 2, action: { kind: "remove", id: 1 }, email: "nope" })).toBe(
      false,
    );
  });

  it("turns arktype's union of discriminated objects (anyOf) into oneOf", () => {
    const args = type({ action: type({ kind: "'add'", title: "string" }).or({ kind: "'remove'", id: "number" }) });
    const schema = sentSchema(defineTool({ name: "act", description: "Act.", args }));
    const action = schema.properties!.action as { oneOf: unknown[] };
    expect(action.oneOf).toHaveLength(2);
    expect(action).toEqual({
      oneOf: expect.arrayContaining([
        { type: "object", properties: { kind: { type: "string", enum: ["add"] }, title: { type: "string" } }, required: ["kind", "title"] },
        { type: "object", properties: { kind: { type: "string", enum: ["remove"] }, id: { type: "number" } }, required: ["id", "kind"] },
      ]),
    });
    expect(coreAccepts(schema, { action: { kind: "remove", id: 1 } })).toBe(true);
    expect(coreAccepts(schema, { action: { kind: "remove", title: "x" } })).toBe(false);
  });

  it("describes a transform by its input: the agent sends the input, the handler gets the output", () => {
    const args = z.object({
      count: z
        .string()
        .regex(/^[0-9]+$/)
        .transform(Number),
    });
    expect(sentSchema(defineTool({ name: "count", description: "Count.", args })).properties).toEqual({
      count: { type: "string", pattern: "^[0-9]+$" },
    });
  });

  it("falls back to a converter method on the schema object (toJSONSchema, toJsonSchema)", () => {
    const zodSchema = z.object({ count: z.string().transform(Number) });
    const arktypeSchema = type({ label: "string" });
    const withoutStandardJson = (props: object) => {
      const { jsonSchema: _jsonSchema, ...rest } = props as { jsonSchema?: unknown };
      return rest;
    };
    // As zod and arktype releases before Standard JSON Schema look: only a method on the object converts.
    const olderZod = {
      "~standard": withoutStandardJson(zodSchema["~standard"]),
      toJSONSchema: (options: object) => zodSchema.toJSONSchema(options),
    } as unknown as typeof zodSchema;
    const olderArktype = {
      "~standard": withoutStandardJson(arktypeSchema["~standard"]),
      toJsonSchema: (options: object) => arktypeSchema.toJsonSchema(options),
    } as unknown as typeof arktypeSchema;
    // The input side: a transform's output could not be described at all.
    expect(sentSchema(defineTool({ name: "older_zod", description: "d", args: olderZod }))).toEqual({
      type: "object",
      properties: { count: { type: "string" } },
      required: ["count"],
    });
    expect(sentSchema(defineTool({ name: "older_arktype", description: "d", args: olderArktype }))).toEqual({
      type: "object",
      properties: { label: { type: "string" } },
      required: ["label"],
    });
  });

  it("converts once per definition", () => {
    let conversions = 0;
    const inner = z.object({ title: z.string() });
    const counting = {
      "~standard": {
        ...inner["~standard"],
        jsonSchema: {
          input: (options: { target: string }) => {
            conversions += 1;
            return inner["~standard"].jsonSchema.input(options as never);
          },
          output: inner["~standard"].jsonSchema.output,
        },
      },
    };
    const tool = defineTool({ name: "counted", description: "Counted.", args: counting as typeof inner });
    sentSchema(tool);
    sentSchema(tool);
    expect(conversions).toBe(1);
  });
});

describe("schemas outside the subset are refused at defineTool", () => {
  const cases: Array<[string, () => unknown, RegExp, string]> = [
    [
      "an overlapping union (anyOf)",
      () => defineTool({ name: "t", description: "d", args: z.object({ payload: z.object({ value: z.union([z.string(), z.string().min(3)]) }) }) }),
      /anyOf \(a union whose options may overlap\)/,
      "payload.value",
    ],
    [
      "a nullable value",
      () => defineTool({ name: "t", description: "d", args: z.object({ note: z.string().nullable() }) }),
      /null \(a nullable value\)/,
      "note",
    ],
    [
      "a nullable value in arktype",
      () => defineTool({ name: "t", description: "d", args: type({ items: type({ note: "string | null" }).array() }) }),
      /null \(a nullable value\)/,
      "items[].note(option 2)",
    ],
    [
      "a record",
      () => defineTool({ name: "t", description: "d", args: z.object({ counts: z.record(z.string(), z.number()) }) }),
      /propertyNames \(a record/,
      "counts",
    ],
    [
      "a tuple",
      () => defineTool({ name: "t", description: "d", args: z.object({ point: z.tuple([z.number(), z.number()]) }) }),
      /prefixItems \(a tuple\)/,
      "point",
    ],
    [
      "a recursive schema ($ref)",
      () => {
        const Node = z.object({
          name: z.string(),
          get children() {
            return z.array(Node);
          },
        });
        return defineTool({ name: "t", description: "d", args: z.object({ tree: Node }) });
      },
      /\$ref \(a recursive or shared schema\)/,
      "tree",
    ],
    [
      "a strict bound on a number",
      () => defineTool({ name: "t", description: "d", args: z.object({ price: z.number().positive() }) }),
      /exclusiveMinimum/,
      "price",
    ],
    ["a step", () => defineTool({ name: "t", description: "d", args: z.object({ even: z.number().multipleOf(2) }) }), /multipleOf/, "even"],
    [
      "a pattern that needs backtracking",
      () => defineTool({ name: "t", description: "d", args: z.object({ code: z.string().regex(/^(?=[A-Z])\w+$/) }) }),
      /look-ahead assertions need a backtracking engine/,
      "code",
    ],
    [
      "a format without a pattern",
      () => defineTool({ name: "t", description: "d", args: toStandardJsonSchema(v.object({ to: v.pipe(v.string(), v.email()) })) }),
      /format "email"/,
      "to",
    ],
    [
      "a boolean literal",
      () => defineTool({ name: "t", description: "d", args: z.object({ confirm: z.literal(true) }) }),
      /a boolean literal \(true\)/,
      "confirm",
    ],
    [
      "a value of any type",
      () => defineTool({ name: "t", description: "d", args: z.object({ extra: z.unknown() }) }),
      /a value of any type/,
      "extra",
    ],
    [
      "an intersection",
      () =>
        defineTool({
          name: "t",
          description: "d",
          args: toStandardJsonSchema(v.object({ both: v.intersect([v.object({ a: v.string() }), v.object({ b: v.string() })]) })),
        }),
      /allOf \(an intersection\)/,
      "both",
    ],
    ["a root that is not an object", () => defineTool({ name: "t", description: "d", args: z.string() }), /a root that is not an object/, ""],
  ];

  it.each(cases)("refuses %s, naming the feature and the property", (_what, define, feature, path) => {
    const error = refusal(define);
    expect(error.message).toMatch(feature);
    expect(error.message).toMatch(/^tool t: args/);
    if (path !== "") {
      expect(error.message).toContain(`args.${path} uses`);
      expect(error.details).toMatchObject({ tool: "t", path });
    }
  });

  it("reports what the library itself cannot convert", () => {
    const error = refusal(() => defineTool({ name: "when", description: "d", args: z.object({ at: z.date() }) }));
    expect(error.message).toMatch(/^tool when: args cannot be described as JSON Schema: .*Date cannot be represented/);
  });

  it("asks for a JSON Schema when a valibot schema does not export one", () => {
    const error = refusal(() => defineTool({ name: "plain", description: "d", args: v.object({ title: v.string() }) }));
    expect(error.message).toMatch(/valibot schema offers no JSON Schema export/);
    expect(error.message).toMatch(/toStandardJsonSchema\(schema\) from @valibot\/to-json-schema/);
  });

  it("takes exactly one of args and argsSchema, and args must be a Standard Schema", () => {
    const argsSchema = { type: "object", properties: {} } as const;
    expect(refusal(() => defineTool({ name: "both", description: "d", args: z.object({}), argsSchema } as never)).message).toMatch(
      /give either args \(a Standard Schema\) or argsSchema/,
    );
    expect(refusal(() => defineTool({ name: "bad", description: "d", args: { title: "string" } } as never)).message).toMatch(
      /args must be a Standard Schema/,
    );
    expect(refusal(() => defineTool({ name: "lone", description: "d", argsSchema, jsonSchema: {} } as never)).message).toMatch(
      /jsonSchema goes with args/,
    );
  });

  it("refuses the same way in createSession for a tool not built with defineTool", () => {
    const tool = { name: "raw", description: "d", args: z.object({ note: z.string().nullable() }) };
    expect(() => prepareCreateSession({ skills: { guidance: "", tools: [tool] } })).toThrow(/tool raw: args\.note uses null/);
  });
});
