import { describe, expect, it } from "vitest";
import type { ToolManifestEntry } from "@pedelec/protocol/tool-schema";
import { ToolArgsValidators } from "./tool-args-validators.js";
import { ToolRegistry } from "./tool-registry.js";

type Schema = ToolManifestEntry["argsSchema"];
/** Also what the manifest's type (and its check at the wire) refuses: the validators must hold against that too. */
type AnySchema = Schema | Record<string, unknown>;

const tool = (name: string, argsSchema: AnySchema): ToolManifestEntry => ({ name, description: name, argsSchema: argsSchema as Schema });

const titleSchema = (): Schema => ({
  type: "object",
  properties: { title: { type: "string", minLength: 1 } },
  required: ["title"],
  additionalProperties: false,
});
const countSchema = (): Schema => ({
  type: "object",
  properties: { count: { type: "integer", minimum: 0 } },
  required: ["count"],
  additionalProperties: false,
});

const accepts = (registry: ToolRegistry, name: string, argsJson: string): boolean => {
  try {
    registry.parseArgs(name, argsJson);
    return true;
  } catch (error) {
    expect(error).toMatchObject({ code: "TOOL_ARGS_INVALID" });
    return false;
  }
};

describe("what counts as present", () => {
  it("counts only own properties: a required name every object inherits is still missing from {}", () => {
    const schema: AnySchema = {
      type: "object",
      properties: { constructor: { type: "string" }, toString: { type: "string" } },
      required: ["constructor"],
    };
    const registry = new ToolRegistry([tool("inherited", schema)], new ToolArgsValidators());
    expect(accepts(registry, "inherited", "{}")).toBe(false);
    expect(accepts(registry, "inherited", '{"constructor":"x"}')).toBe(true);
    // An inherited function is not checked against the property's schema either.
    expect(accepts(registry, "inherited", '{"constructor":"x","toString":"y"}')).toBe(true);
  });

  it("refuses, with a coded error, names uniqueItems cannot compare instead of throwing inside Ajv", () => {
    const schema: Schema = { type: "object", properties: { tags: { type: "array", items: { type: "object" }, uniqueItems: true } } };
    const registry = new ToolRegistry([tool("unique", schema)], new ToolArgsValidators());
    // Ajv's comparison would call these as methods and throw a TypeError.
    expect(() => registry.parseArgs("unique", '{"tags":[{},{"toString":null}]}')).toThrow(
      expect.objectContaining({ code: "TOOL_ARGS_INVALID", message: expect.stringContaining("tags[1].toString") }),
    );
    expect(accepts(registry, "unique", '{"tags":[{"valueOf":1},{"valueOf":1}]}')).toBe(false);
    expect(accepts(registry, "unique", '{"tags":[{"a":1},{"a":2}]}')).toBe(true);
    // Without uniqueItems nothing compares, so the names are ordinary data.
    const plain = new ToolRegistry([tool("plain", { type: "object", properties: { tags: { type: "array" } } })], new ToolArgsValidators());
    expect(accepts(plain, "plain", '{"tags":[{},{"toString":null}]}')).toBe(true);
  });
});

describe("validators shared between sessions", () => {
  it("keeps two sessions' tools of the same name and different schemas apart", () => {
    const validators = new ToolArgsValidators();
    const first = new ToolRegistry([tool("update", titleSchema())], validators);
    const second = new ToolRegistry([tool("update", countSchema())], validators);
    expect(accepts(first, "update", '{"title":"Milk"}')).toBe(true);
    expect(accepts(first, "update", '{"count":3}')).toBe(false);
    expect(accepts(second, "update", '{"count":3}')).toBe(true);
    expect(accepts(second, "update", '{"title":"Milk"}')).toBe(false);
    expect(validators.cachedCount).toBe(2);
  });

  it("compiles identical schemas once, whatever their key order, and both sessions validate with it", () => {
    const validators = new ToolArgsValidators();
    const reordered: Schema = {
      additionalProperties: false,
      required: ["title"],
      properties: { title: { minLength: 1, type: "string" } },
      type: "object",
    };
    const first = new ToolRegistry([tool("add", titleSchema())], validators);
    const second = new ToolRegistry([tool("add", reordered)], validators);
    expect(first.get("add").validate).toBe(second.get("add").validate);
    expect(validators.cachedCount).toBe(1);
    for (const registry of [first, second]) {
      expect(accepts(registry, "add", '{"title":"Milk"}')).toBe(true);
      expect(accepts(registry, "add", '{"title":""}')).toBe(false);
    }
    // A failure in one session's call leaves nothing behind for the other's.
    expect(() => first.parseArgs("add", '{"title":""}')).toThrow(/fewer than 1/);
    expect(second.parseArgs("add", '{"title":"Bread"}')).toEqual({ title: "Bread" });
  });

  it("lets two sessions declare the same $id with different schemas", () => {
    const validators = new ToolArgsValidators();
    const first = new ToolRegistry([tool("t", { ...titleSchema(), $id: "https://example.test/args" })], validators);
    const second = new ToolRegistry([tool("t", { ...countSchema(), $id: "https://example.test/args" })], validators);
    expect(accepts(first, "t", '{"title":"Milk"}')).toBe(true);
    expect(accepts(second, "t", '{"count":1}')).toBe(true);
    expect(accepts(second, "t", '{"title":"Milk"}')).toBe(false);
  });

  it("never resolves a $ref against another session's $id, top-level or nested", () => {
    const validators = new ToolArgsValidators();
    new ToolRegistry(
      [
        tool("a", { type: "object", $id: "https://example.test/title" }),
        tool("b", { type: "object", properties: { inner: { $id: "https://example.test/inner", type: "string" } } }),
      ],
      validators,
    );
    for (const target of ["https://example.test/title", "https://example.test/inner"]) {
      expect(() => new ToolRegistry([tool("c", { type: "object", properties: { x: { $ref: target } } })], validators)).toThrowError(
        expect.objectContaining({ code: "INVALID_INPUT", message: expect.stringContaining("argsSchema is not usable") as string }) as Error,
      );
    }
  });

  it("is not disturbed by a schema that failed to compile", () => {
    const validators = new ToolArgsValidators();
    expect(() => new ToolRegistry([tool("bad", { type: "object", $id: "https://example.test/x", notAKeyword: 1 })], validators)).toThrowError(
      expect.objectContaining({ code: "INVALID_INPUT" }) as Error,
    );
    const registry = new ToolRegistry([tool("good", { ...titleSchema(), $id: "https://example.test/x" })], validators);
    expect(accepts(registry, "good", '{"title":"Milk"}')).toBe(true);
    expect(validators.cachedCount).toBe(1);
  });

  it("validates with a private copy: changing the manifest afterwards changes nothing", () => {
    const validators = new ToolArgsValidators();
    const schema = titleSchema() as { required: string[] };
    const registry = new ToolRegistry([tool("add", schema as Schema)], validators);
    schema.required.push("column");
    expect(accepts(registry, "add", '{"title":"Milk"}')).toBe(true);
  });

  it("keeps validators working after their Ajv instance is replaced, and bounds the cache", () => {
    const validators = new ToolArgsValidators({ maxCached: 3, compilationsPerInstance: 2 });
    const recursive: AnySchema = { type: "object", properties: { child: { $ref: "#" } }, additionalProperties: false };
    const registries = [
      new ToolRegistry([tool("tree", recursive)], validators),
      ...Array.from(
        { length: 6 },
        (_, index) =>
          new ToolRegistry([tool("n", { type: "object", properties: { n: { type: "integer", maximum: index } }, required: ["n"] })], validators),
      ),
    ];
    expect(validators.cachedCount).toBe(3);
    expect(accepts(registries[0]!, "tree", '{"child":{"child":{}}}')).toBe(true);
    expect(accepts(registries[0]!, "tree", '{"child":{"child":1}}')).toBe(false);
    registries.slice(1).forEach((registry, index) => {
      expect(accepts(registry, "n", JSON.stringify({ n: index }))).toBe(true);
      expect(accepts(registry, "n", JSON.stringify({ n: index + 1 }))).toBe(false);
    });
  });
});

describe("loading Ajv ahead of need", () => {
  it("warm() readies the instance the next sessions' validators come from, and may be called again", () => {
    const validators = new ToolArgsValidators({ compilationsPerInstance: 1 });
    validators.warm();
    validators.warm();
    const first = new ToolRegistry([tool("add", titleSchema())], validators);
    const second = new ToolRegistry([tool("count", countSchema())], validators);
    expect(accepts(first, "add", '{"title":"Milk"}')).toBe(true);
    expect(accepts(first, "add", '{"title":""}')).toBe(false);
    expect(accepts(second, "count", '{"count":3}')).toBe(true);
    expect(accepts(second, "count", '{"count":-1}')).toBe(false);
    expect(validators.cachedCount).toBe(2);
  });
});
