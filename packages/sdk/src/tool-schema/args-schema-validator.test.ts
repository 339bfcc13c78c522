import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ToolArgsValidators } from "@pedelec/core/tool-args-validators";
import { ToolRegistry } from "@pedelec/core/tool-registry";
import { fuzzSettings } from "@pedelec/protocol/testing/fuzz-values";
import { toolArgsSchemaSchema, type ArgsSchemaNode, type ObjectSchemaNode } from "@pedelec/protocol/tool-schema";
import { argsSchemaChecker } from "./args-schema-validator.js";

const pageAccepts = (schema: ObjectSchemaNode, args: unknown): boolean => argsSchemaChecker(schema)(args).length === 0;

describe("the page's argsSchema check", () => {
  it("counts string lengths in code points, as JSON Schema does", () => {
    const schema: ObjectSchemaNode = { type: "object", properties: { s: { type: "string", minLength: 2, maxLength: 2 } } };
    expect(pageAccepts(schema, { s: "😀😀" })).toBe(true);
    expect(pageAccepts(schema, { s: "😀" })).toBe(false);
    expect(pageAccepts(schema, { s: "\uD800\uD800" })).toBe(true);
  });

  it("needs exactly one oneOf option to match", () => {
    const schema: ObjectSchemaNode = {
      type: "object",
      properties: { v: { oneOf: [{ type: "number" }, { type: "integer" }, { type: "string" }] } },
    };
    expect(pageAccepts(schema, { v: 1.5 })).toBe(true);
    expect(pageAccepts(schema, { v: "x" })).toBe(true);
    expect(pageAccepts(schema, { v: 2 })).toBe(false);
    expect(pageAccepts(schema, { v: true })).toBe(false);
  });

  it("compares items as JSON values for uniqueItems (key order aside, 0 equal to -0)", () => {
    const schema: ObjectSchemaNode = { type: "object", properties: { list: { type: "array", uniqueItems: true } } };
    expect(
      pageAccepts(schema, {
        list: [
          { a: 1, b: 2 },
          { b: 2, a: 1 },
        ],
      }),
    ).toBe(false);
    expect(pageAccepts(schema, { list: [0, -0] })).toBe(false);
    expect(pageAccepts(schema, { list: [1, "1", [1], { "1": 1 }] })).toBe(true);
  });

  it("reports where and what, without quoting the value", () => {
    const schema: ObjectSchemaNode = {
      type: "object",
      properties: { tags: { type: "array", items: { type: "string", pattern: "^[a-z]+$" } } },
      required: ["tags", "title"],
      additionalProperties: false,
    };
    const issues = argsSchemaChecker(schema)({ tags: ["ok", "SECRET"], extra: 1 });
    expect(issues).toEqual([
      { path: [], message: 'must have property "title"' },
      { path: ["tags", 1], message: 'must match pattern "^[a-z]+$"' },
      { path: ["extra"], message: "must not have additional properties" },
    ]);
    expect(JSON.stringify(issues)).not.toContain("SECRET");
  });

  it("counts only own properties as present, not the names every object inherits", () => {
    const properties: Record<string, ArgsSchemaNode> = Object.fromEntries([["constructor", { type: "string" }]]);
    const schema: ObjectSchemaNode = { type: "object", properties, required: ["constructor"] };
    expect(pageAccepts(schema, {})).toBe(false);
    expect(pageAccepts(schema, JSON.parse('{"constructor":"x"}'))).toBe(true);
  });
});

// Property names include names every object inherits: both sides count only own properties.
const propertyName = fc.constantFrom("a", "b", "title", "x y", "ü", "0", "constructor", "toString");
const PATTERNS = ["^a", "b$", "^[a-c]*$", "\\d", "^.{2}$", "😀", "^(ab|c)+$", "[^a]"];
const shortString = fc.oneof(
  fc.constantFrom("", "a", "b", "ab", "abc", "c", "1", "😀", "a😀", "\uD800", "ba", "cab", "aa"),
  fc.string({ maxLength: 5 }),
  fc.string({ unit: "binary", maxLength: 4 }),
);
// Schema text stays well-formed UTF-16: Core refuses a schema holding a lone surrogate (it cannot canonicalize it).
const schemaString = fc.oneof(fc.constantFrom("", "a", "b", "ab", "abc", "1", "😀", "a😀", "aa"), fc.string({ maxLength: 4 }));
const smallNumber = fc.oneof(
  fc.constantFrom(-2, -1, -0.5, 0, 0.5, 1, 1.5, 2, 3, 10, 1e21, -1e21, Number.MAX_SAFE_INTEGER + 2),
  fc.integer({ min: -5, max: 5 }),
  fc.double({ min: -5, max: 5, noNaN: true }),
);
const count = fc.integer({ min: 0, max: 3 });

const annotations = fc.record(
  { description: fc.constant("described"), default: fc.constantFrom<unknown>(1, "x", null, [1]), examples: fc.constant<unknown[]>(["e"]) },
  { requiredKeys: [] },
);

const stringNode: fc.Arbitrary<ArgsSchemaNode> = fc
  .record(
    {
      enum: fc.uniqueArray(schemaString, { minLength: 1, maxLength: 3 }),
      minLength: count,
      maxLength: count,
      pattern: fc.constantFrom(...PATTERNS),
    },
    { requiredKeys: [] },
  )
  .chain((fields) => annotations.map((extra) => ({ type: "string" as const, ...fields, ...extra })));

const numberNode: fc.Arbitrary<ArgsSchemaNode> = fc
  .record(
    {
      type: fc.constantFrom("number" as const, "integer" as const),
      enum: fc.uniqueArray(smallNumber, { minLength: 1, maxLength: 3 }),
      minimum: smallNumber,
      maximum: smallNumber,
    },
    { requiredKeys: ["type"] },
  )
  .chain((fields) => annotations.map((extra) => ({ ...fields, ...extra })));

const leafNode: fc.Arbitrary<ArgsSchemaNode> = fc.oneof(stringNode, numberNode, fc.constant({ type: "boolean" as const }));

const rootSchema: fc.Arbitrary<ObjectSchemaNode> = fc.letrec<{ node: ArgsSchemaNode; object: ObjectSchemaNode }>((tie) => ({
  node: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    leafNode,
    fc
      .record({ items: tie("node"), minItems: count, maxItems: count, uniqueItems: fc.boolean() }, { requiredKeys: [] })
      .map((fields): ArgsSchemaNode => ({ type: "array", ...fields })),
    tie("object"),
    fc.array(tie("node"), { minLength: 1, maxLength: 3 }).map((oneOf): ArgsSchemaNode => ({ oneOf })),
  ),
  object: fc
    .tuple(fc.dictionary(propertyName, tie("node"), { maxKeys: 3 }), fc.boolean(), fc.option(fc.boolean(), { nil: undefined }))
    .chain(([properties, withProperties, additionalProperties]) =>
      fc.subarray(Object.keys(properties)).map(
        (required): ObjectSchemaNode => ({
          type: "object",
          ...(withProperties ? { properties } : {}),
          ...(withProperties && required.length > 0 ? { required } : {}),
          ...(additionalProperties === undefined ? {} : { additionalProperties }),
        }),
      ),
    ),
})).object;

const anyLeaf = fc.oneof(shortString, smallNumber, fc.boolean(), fc.constant(null));

/** Values near what the schema describes (conforming or just off), with now and then a value of another type. */
function valueFor(node: ArgsSchemaNode): fc.Arbitrary<unknown> {
  const near = ((): fc.Arbitrary<unknown> => {
    if ("oneOf" in node) return fc.oneof(...node.oneOf.map(valueFor));
    switch (node.type) {
      case "string": {
        // Lengths at and next to the bounds, in characters that some patterns want and others refuse.
        const lengths = [node.minLength, node.maxLength].filter((value): value is number => value !== undefined);
        const sized = lengths.flatMap((length) => [length - 1, length, length + 1]).filter((length) => length >= 0);
        const atBounds = fc.tuple(fc.constantFrom(...sized, 2), fc.constantFrom("a", "b", "1", "😀")).map(([length, char]) => char.repeat(length));
        return fc.oneof(...(node.enum === undefined ? [] : [fc.constantFrom(...node.enum)]), atBounds, shortString);
      }
      case "number":
      case "integer": {
        const edges = [node.minimum, node.maximum].filter((value): value is number => value !== undefined);
        const around = edges.flatMap((edge) => [edge - 1, edge - 0.5, edge, edge + 0.5, edge + 1]);
        return fc.oneof(fc.constantFrom(...(node.enum ?? []), ...around, 0), smallNumber);
      }
      case "boolean":
        return fc.boolean();
      case "array": {
        const item = node.items === undefined ? anyLeaf : valueFor(node.items);
        return fc
          .tuple(fc.array(item, { maxLength: 4 }), fc.boolean())
          .map(([items, duplicate]) => (duplicate && items.length > 0 ? [...items, items[0]] : items));
      }
      case "object": {
        const properties = Object.entries(node.properties ?? {});
        return fc
          .tuple(
            fc.tuple(...properties.map(([, property]) => fc.option(valueFor(property), { nil: undefined, freq: 4 }))),
            fc.option(fc.tuple(propertyName, anyLeaf), { nil: undefined }),
          )
          .map(([values, extra]) => {
            const record: Record<string, unknown> = {};
            properties.forEach(([name], index) => {
              if (values[index] !== undefined) record[name] = values[index];
            });
            if (extra !== undefined) record[extra[0]] = extra[1];
            return record;
          });
      }
    }
  })();
  return fc.oneof({ arbitrary: near, weight: 12 }, { arbitrary: anyLeaf, weight: 1 }, { arbitrary: fc.constant([]), weight: 1 });
}

const settings = fuzzSettings(process.env, 2_000);

describe("the page refuses what Core's Ajv refuses", () => {
  // Core compiles each new schema with Ajv (a few milliseconds each on a busy machine): runs get time in proportion.
  it("agrees with Core's validator on generated schemas and arguments", { timeout: Math.max(30_000, settings.runs * 20) }, () => {
    console.log(`[args-schema parity] seed=${settings.seed} runs=${settings.runs} (replay with FUZZ_SEED=${settings.seed})`);
    const core = new ToolArgsValidators();
    let compared = 0;
    let unusable = 0;
    let accepted = 0;
    const pair = rootSchema
      .filter((schema) => toolArgsSchemaSchema.safeParse(schema).success)
      // Several arguments per schema: a schema costs Core a compilation, an argument almost nothing.
      .chain((schema) => fc.tuple(fc.constant(schema), fc.array(valueFor(schema), { minLength: 1, maxLength: 8 })));
    fc.assert(
      fc.property(pair, ([schema, generatedArgs]) => {
        // Core's whole check of a call's arguments (ToolRegistry.parseArgs), Ajv included.
        let registry: ToolRegistry;
        try {
          registry = new ToolRegistry([{ name: "generated", description: "generated", argsSchema: schema }], core);
        } catch {
          unusable += 1;
          fc.pre(false);
          return;
        }
        const coreAccepts = (argsJson: string): boolean => {
          try {
            registry.parseArgs("generated", argsJson);
            return true;
          } catch (error) {
            expect(error).toMatchObject({ code: "TOOL_ARGS_INVALID" });
            return false;
          }
        };
        for (const generated of generatedArgs) {
          // What the page gets came through JSON (the extension's port), as Core's input did.
          const argsJson = JSON.stringify(generated);
          const args: unknown = JSON.parse(argsJson);
          const coreVerdict = coreAccepts(argsJson);
          const pageVerdict = pageAccepts(schema, args);
          compared += 1;
          if (coreVerdict) accepted += 1;
          expect(pageVerdict, `schema ${JSON.stringify(schema)} args ${JSON.stringify(args)}`).toBe(coreVerdict);
        }
      }),
      { seed: settings.seed, numRuns: settings.runs },
    );
    expect(unusable).toBe(0);
    console.log(`[args-schema parity] ${compared} compared, ${accepted} accepted by both`);
    // Both verdicts occur often enough for the agreement to mean something.
    expect(accepted).toBeGreaterThan(compared / 20);
    expect(compared - accepted).toBeGreaterThan(compared / 20);
  });
});
