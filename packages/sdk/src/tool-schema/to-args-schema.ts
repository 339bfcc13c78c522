import type {
  ArgsSchemaNode,
  ArraySchemaNode,
  NumberSchemaNode,
  ObjectSchemaNode,
  OneOfSchemaNode,
  StringSchemaNode,
} from "@pedelec/protocol/tool-schema";
import { compileLinearPattern } from "@pedelec/protocol/linear-regex";
import { isPlainRecord } from "./standard-schema.js";

/**
 * Turns the JSON Schema a schema library exported into the subset of JSON Schema Core enforces (the protocol's
 * `ArgsSchemaNode`). Keywords that only annotate (`$schema`, `title`, `deprecated`, …) are dropped; keywords with an
 * exact equivalent are rewritten (`const` → `enum`, a strict integer bound → an inclusive one, a union of options that
 * cannot overlap → `oneOf`); a constraint the subset cannot express is refused, never dropped, so Core and the agent's
 * `tool-spec` never accept less than the app's schema says.
 */

/** Why a schema cannot become a tool-argument schema, and where. */
export interface ArgsSchemaRefusal {
  /** The keyword or construct, e.g. `anyOf (a union whose options may overlap)`. */
  feature: string;
  /** The property path in the arguments, e.g. `tags[].kind`; `(root)` for the arguments object itself. */
  path: string;
  /** The JSON Pointer of the refused node in the exported JSON Schema, e.g. `/properties/tags/items/properties/kind`. */
  schemaPath: string;
  /** What to do instead, when there is a usual way out. */
  hint?: string;
}

export type ArgsSchemaConversion = { ok: true; schema: ObjectSchemaNode } | { ok: false; refusal: ArgsSchemaRefusal };

/** Converts an exported JSON Schema; the root must describe an object. */
export function toArgsSchema(jsonSchema: Record<string, unknown>): ArgsSchemaConversion {
  try {
    const root = convertNode(jsonSchema, { dataPath: [], schemaPath: [] });
    if (!("type" in root) || root.type !== "object") {
      throw new Refused(
        { dataPath: [], schemaPath: [] },
        "a root that is not an object",
        "the arguments are one object: describe it with an object schema",
      );
    }
    return { ok: true, schema: root };
  } catch (error) {
    if (error instanceof Refused) return { ok: false, refusal: error.refusal };
    throw error;
  }
}

interface Location {
  /** Property names, `[]` for array items, `(option n)` for a union's option. */
  readonly dataPath: readonly string[];
  readonly schemaPath: readonly (string | number)[];
}

class Refused extends Error {
  readonly refusal: ArgsSchemaRefusal;
  constructor(location: Location, feature: string, hint?: string) {
    super(feature);
    this.refusal = {
      feature,
      path: renderDataPath(location.dataPath),
      schemaPath: `/${location.schemaPath.map((segment) => String(segment).replace(/~/g, "~0").replace(/\//g, "~1")).join("/")}`,
      ...(hint === undefined ? {} : { hint }),
    };
  }
}

function renderDataPath(segments: readonly string[]): string {
  if (segments.length === 0) return "(root)";
  let text = "";
  for (const segment of segments) {
    if (segment === "[]" || segment.startsWith("(")) text += segment;
    else text += text === "" ? segment : `.${segment}`;
  }
  return text;
}

const at = (location: Location, schemaKey: string | number, dataSegment?: string): Location => ({
  dataPath: dataSegment === undefined ? location.dataPath : [...location.dataPath, dataSegment],
  schemaPath: [...location.schemaPath, schemaKey],
});

/** Annotations with no effect on what is accepted, which the subset has no room for. */
const DROPPED_ANNOTATIONS: ReadonlySet<string> = new Set([
  "$schema",
  "$id",
  "$comment",
  "$anchor",
  "$defs",
  "definitions",
  "title",
  "deprecated",
  "readOnly",
  "writeOnly",
  "contentMediaType",
  "contentEncoding",
]);

/** Keywords the subset keeps on every node. */
const ANNOTATIONS = ["description", "default", "examples"] as const;

/** Friendly names and ways out for keywords the subset cannot express. */
const UNSUPPORTED: Readonly<Record<string, { feature: string; hint?: string }>> = {
  $ref: { feature: "$ref (a recursive or shared schema)", hint: "write the nested object out; recursive shapes cannot be tool arguments" },
  $dynamicRef: { feature: "$dynamicRef (a recursive schema)" },
  allOf: { feature: "allOf (an intersection)", hint: "merge the object shapes into one object" },
  not: { feature: "not (a negated schema)" },
  if: { feature: "if/then/else (a conditional schema)" },
  // biome-ignore lint/suspicious/noThenProperty: `then` is a JSON Schema keyword, and this table is never awaited
  then: { feature: "if/then/else (a conditional schema)" },
  else: { feature: "if/then/else (a conditional schema)" },
  multipleOf: { feature: "multipleOf (a step)" },
  format: { feature: "format (a string format without a pattern)", hint: "add a pattern or check the format in the handler" },
  prefixItems: { feature: "prefixItems (a tuple)", hint: "use an array of one item type or an object" },
  additionalItems: { feature: "additionalItems (a tuple)", hint: "use an array of one item type or an object" },
  contains: { feature: "contains" },
  minContains: { feature: "minContains" },
  maxContains: { feature: "maxContains" },
  unevaluatedItems: { feature: "unevaluatedItems" },
  unevaluatedProperties: { feature: "unevaluatedProperties" },
  propertyNames: { feature: "propertyNames (a record with free keys)", hint: "declare the properties, or take an array of entries" },
  patternProperties: { feature: "patternProperties (a record with free keys)", hint: "declare the properties, or take an array of entries" },
  minProperties: { feature: "minProperties" },
  maxProperties: { feature: "maxProperties" },
  dependentRequired: { feature: "dependentRequired" },
  dependentSchemas: { feature: "dependentSchemas" },
  dependencies: { feature: "dependencies" },
  exclusiveMinimum: { feature: "exclusiveMinimum (a strict lower bound, e.g. positive() or gt())", hint: "use an inclusive minimum" },
  exclusiveMaximum: { feature: "exclusiveMaximum (a strict upper bound, e.g. negative() or lt())", hint: "use an inclusive maximum" },
  nullable: { feature: "nullable (null as a value)", hint: "make the property optional instead" },
};

type TypeName = "string" | "number" | "integer" | "boolean" | "array" | "object";
const TYPE_NAMES: ReadonlySet<string> = new Set(["string", "number", "integer", "boolean", "array", "object"]);

/** The keywords each node type may carry besides the annotations (`format` is handled with `pattern`). */
const TYPE_KEYWORDS: Readonly<Record<TypeName, ReadonlySet<string>>> = {
  string: new Set(["enum", "const", "minLength", "maxLength", "pattern", "format"]),
  number: new Set(["enum", "const", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"]),
  integer: new Set(["enum", "const", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"]),
  boolean: new Set(["enum", "const"]),
  array: new Set(["items", "minItems", "maxItems", "uniqueItems"]),
  object: new Set(["properties", "required", "additionalProperties"]),
};

function convertNode(raw: unknown, location: Location): ArgsSchemaNode {
  if (raw === true || (isPlainRecord(raw) && Object.keys(raw).every((key) => DROPPED_ANNOTATIONS.has(key) || key === "description"))) {
    throw new Refused(location, "a value of any type (any / unknown)", "give the value a type");
  }
  if (raw === false) throw new Refused(location, "a schema that accepts nothing (false / never)");
  if (!isPlainRecord(raw)) throw new Refused(location, "a schema that is not a JSON object");

  const node: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(raw)) {
    if (!DROPPED_ANNOTATIONS.has(key)) node[key] = value;
  }
  for (const key of ["$ref", "$dynamicRef", "allOf", "not", "if", "then", "else", "nullable"]) {
    if (key in node) throw refusedKeyword(location, key);
  }
  if ("anyOf" in node || "oneOf" in node) return convertUnion(node, location);

  const types = typesOf(node, location);
  if (types.length > 1) return convertTypeUnion(node, types, location);
  const type = types[0]!;
  for (const key of Object.keys(node)) {
    if (key === "type" || (ANNOTATIONS as readonly string[]).includes(key) || TYPE_KEYWORDS[type].has(key)) continue;
    throw refusedKeyword(location, key, type);
  }
  switch (type) {
    case "string":
      return withAnnotations(convertString(node, location), node, location);
    case "number":
    case "integer":
      return withAnnotations(convertNumber(node, type, location), node, location);
    case "boolean":
      return withAnnotations(convertBoolean(node, location), node, location);
    case "array":
      return withAnnotations(convertArray(node, location), node, location);
    case "object":
      return withAnnotations(convertObject(node, location), node, location);
  }
}

function refusedKeyword(location: Location, key: string, type?: TypeName): Refused {
  const known = UNSUPPORTED[key];
  if (known !== undefined) return new Refused(location, known.feature, known.hint);
  if (type === undefined) return new Refused(location, `the keyword ${key}`);
  return new Refused(location, `the keyword ${key} on ${/^[aeiou]/.test(type) ? "an" : "a"} ${type}`);
}

/**
 * The node's type or types. Without `type`, an `enum` / `const` whose values share one type gives it (arktype writes
 * literals that way).
 */
function typesOf(node: Record<string, unknown>, location: Location): TypeName[] {
  const declared = node.type;
  if (declared === undefined) {
    const values = "const" in node ? [node.const] : Array.isArray(node.enum) ? node.enum : undefined;
    if (values === undefined || values.length === 0) {
      throw new Refused(location, "a value of any type (no type given)", "give the value a type");
    }
    const kinds = new Set(values.map(literalType));
    if (kinds.size !== 1) throw new Refused(location, "an enum mixing value types", "use values of one type");
    const kind = [...kinds][0]!;
    if (kind === null) throw literalRefusal(location, values);
    return [kind];
  }
  const list = Array.isArray(declared) ? declared : [declared];
  for (const type of list) {
    if (type === "null") throw new Refused(location, "null (a nullable value)", "make the property optional instead of nullable");
    if (typeof type !== "string" || !TYPE_NAMES.has(type)) throw new Refused(location, `the type ${JSON.stringify(type)}`);
  }
  const unique = [...new Set(list as TypeName[])];
  // Every integer is a number: "number" alone accepts exactly what both do.
  return unique.includes("number") ? unique.filter((type) => type !== "integer") : unique;
}

function literalType(value: unknown): TypeName | null {
  if (typeof value === "string") return "string";
  if (typeof value === "number" && Number.isFinite(value)) return "number";
  if (typeof value === "boolean") return "boolean";
  return null;
}

function literalRefusal(location: Location, values: readonly unknown[]): Refused {
  return values.some((value) => value === null)
    ? new Refused(location, "null (a nullable value)", "make the property optional instead of nullable")
    : new Refused(location, "an enum or const of objects or arrays");
}

/** `enum` and `const` together: the values both allow. */
function literals(node: Record<string, unknown>, location: Location): unknown[] | undefined {
  const fromEnum = node.enum === undefined ? undefined : node.enum;
  if (fromEnum !== undefined && (!Array.isArray(fromEnum) || fromEnum.length === 0)) {
    throw new Refused(location, "an enum that is not a non-empty list");
  }
  if (!("const" in node)) return fromEnum;
  const single = [node.const];
  return fromEnum === undefined ? single : fromEnum.filter((value) => value === node.const);
}

function convertString(node: Record<string, unknown>, location: Location): StringSchemaNode {
  const result: StringSchemaNode = { type: "string" };
  const values = literals(node, location);
  if (values !== undefined) {
    if (values.length === 0 || !values.every((value) => typeof value === "string")) {
      throw new Refused(location, "an enum with values that are not strings on a string");
    }
    result.enum = [...new Set(values as string[])];
  }
  copyCount(node, "minLength", result, location);
  copyCount(node, "maxLength", result, location);
  if (node.pattern !== undefined) {
    const pattern = node.pattern;
    if (typeof pattern !== "string") throw new Refused(at(location, "pattern"), "a pattern that is not a string");
    const compiled = compileLinearPattern(pattern);
    if (!compiled.ok) throw new Refused(at(location, "pattern"), `the pattern ${JSON.stringify(pattern)} (${compiled.reason})`);
    result.pattern = pattern;
  } else if (node.format !== undefined) {
    // A format next to a pattern is the pattern's name (zod and arktype write both); alone it would go unchecked.
    throw new Refused(at(location, "format"), `format ${JSON.stringify(node.format)} (a string format without a pattern)`, UNSUPPORTED.format!.hint);
  }
  return result;
}

function convertNumber(node: Record<string, unknown>, type: "number" | "integer", location: Location): NumberSchemaNode {
  const result: NumberSchemaNode = { type };
  const values = literals(node, location);
  if (values !== undefined) {
    if (values.length === 0 || !values.every((value) => typeof value === "number" && Number.isFinite(value))) {
      throw new Refused(location, `an enum with values that are not numbers on a ${type}`);
    }
    result.enum = [...new Set(values as number[])];
  }
  let minimum = finiteNumber(node, "minimum", location);
  let maximum = finiteNumber(node, "maximum", location);
  const exclusiveMinimum = finiteNumber(node, "exclusiveMinimum", location);
  const exclusiveMaximum = finiteNumber(node, "exclusiveMaximum", location);
  if (exclusiveMinimum !== undefined || exclusiveMaximum !== undefined) {
    // Between integers a strict bound has an inclusive twin (> 0 is ≥ 1); between numbers it has none.
    if (type !== "integer") throw refusedKeyword(location, exclusiveMinimum !== undefined ? "exclusiveMinimum" : "exclusiveMaximum");
    if (exclusiveMinimum !== undefined) minimum = Math.max(minimum ?? -Infinity, Math.floor(exclusiveMinimum) + 1);
    if (exclusiveMaximum !== undefined) maximum = Math.min(maximum ?? Infinity, Math.ceil(exclusiveMaximum) - 1);
  }
  if (node.multipleOf !== undefined && !(type === "integer" && node.multipleOf === 1)) throw refusedKeyword(location, "multipleOf");
  if (minimum !== undefined) result.minimum = minimum;
  if (maximum !== undefined) result.maximum = maximum;
  return result;
}

function finiteNumber(node: Record<string, unknown>, key: string, location: Location): number | undefined {
  const value = node[key];
  if (value === undefined) return undefined;
  if (typeof value !== "number" || !Number.isFinite(value)) throw new Refused(at(location, key), `a ${key} that is not a finite number`);
  return value;
}

function copyCount<TKey extends string>(node: Record<string, unknown>, key: TKey, result: { [K in TKey]?: number }, location: Location): void {
  const value = node[key];
  if (value === undefined) return;
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) {
    throw new Refused(at(location, key), `a ${key} that is not a count`);
  }
  result[key] = value;
}

function convertBoolean(node: Record<string, unknown>, location: Location): ArgsSchemaNode {
  const values = literals(node, location);
  if (values !== undefined && !(values.includes(true) && values.includes(false))) {
    // The subset's boolean has no enum; `z.literal(true)` would become any boolean.
    throw new Refused(location, `a boolean literal (${values.map((value) => JSON.stringify(value)).join(", ")})`, "use a plain boolean");
  }
  return { type: "boolean" };
}

function convertArray(node: Record<string, unknown>, location: Location): ArraySchemaNode {
  const result: ArraySchemaNode = { type: "array" };
  const items = node.items;
  if (Array.isArray(items)) throw new Refused(at(location, "items"), "items as a list (a tuple)", UNSUPPORTED.prefixItems!.hint);
  // `items: {}` (any item) is what no `items` means.
  if (items !== undefined && !(isPlainRecord(items) && Object.keys(items).every((key) => DROPPED_ANNOTATIONS.has(key)))) {
    result.items = convertNode(items, at(location, "items", "[]"));
  }
  copyCount(node, "minItems", result, location);
  copyCount(node, "maxItems", result, location);
  if (node.uniqueItems !== undefined) {
    if (typeof node.uniqueItems !== "boolean") throw new Refused(at(location, "uniqueItems"), "a uniqueItems that is not a boolean");
    if (node.uniqueItems) result.uniqueItems = true;
  }
  return result;
}

function convertObject(node: Record<string, unknown>, location: Location): ObjectSchemaNode {
  const result: ObjectSchemaNode = { type: "object" };
  const properties = node.properties;
  if (properties !== undefined) {
    if (!isPlainRecord(properties)) throw new Refused(at(location, "properties"), "properties that are not an object");
    const converted: Record<string, ArgsSchemaNode> = {};
    for (const [name, property] of Object.entries(properties)) {
      converted[name] = convertNode(property, at(at(location, "properties"), name, name));
    }
    result.properties = converted;
  }
  if (node.required !== undefined) {
    const required = node.required;
    if (!Array.isArray(required) || !required.every((name) => typeof name === "string")) {
      throw new Refused(at(location, "required"), "a required that is not a list of names");
    }
    const missing = required.findIndex((name) => result.properties === undefined || !Object.hasOwn(result.properties, name));
    if (missing >= 0) {
      const name = required[missing] as string;
      throw new Refused(at(at(location, "required"), missing, name), "a required property without a schema", "declare it under properties");
    }
    if (required.length > 0) result.required = [...new Set(required as string[])];
  }
  const additional = node.additionalProperties;
  if (additional === false) result.additionalProperties = false;
  else if (additional !== undefined && additional !== true && !(isPlainRecord(additional) && Object.keys(additional).length === 0)) {
    // `true` and `{}` are what JSON Schema does anyway (a loose object); a schema for the rest is a record.
    throw new Refused(
      at(location, "additionalProperties"),
      "additionalProperties with a schema (a record or catchall)",
      UNSUPPORTED.propertyNames!.hint,
    );
  }
  return result;
}

function withAnnotations<TNode extends ArgsSchemaNode>(result: TNode, node: Record<string, unknown>, location: Location): TNode {
  if (node.description !== undefined) {
    if (typeof node.description !== "string") throw new Refused(at(location, "description"), "a description that is not a string");
    result.description = node.description;
  }
  if (node.default !== undefined) {
    if (!isJson(node.default)) throw new Refused(at(location, "default"), "a default that is not JSON");
    result.default = node.default;
  }
  // Only the list form of examples is JSON Schema's; other shapes are dropped as the annotations they are.
  if (Array.isArray(node.examples) && node.examples.every(isJson)) result.examples = node.examples;
  return result;
}

function isJson(value: unknown): boolean {
  const pending: unknown[] = [value];
  let visited = 0;
  while (pending.length > 0) {
    const current = pending.pop();
    visited += 1;
    if (visited > 10_000) return false;
    if (current === null || typeof current === "string" || typeof current === "boolean") continue;
    if (typeof current === "number") {
      if (!Number.isFinite(current)) return false;
      continue;
    }
    if (Array.isArray(current)) pending.push(...current);
    else if (isPlainRecord(current)) pending.push(...Object.values(current));
    else return false;
  }
  return true;
}

/** `oneOf` as it is; `anyOf` when no value can match two of its options (then it means the same as `oneOf`). */
function convertUnion(node: Record<string, unknown>, location: Location): ArgsSchemaNode {
  const keyword = "oneOf" in node ? "oneOf" : "anyOf";
  if ("oneOf" in node && "anyOf" in node) throw new Refused(location, "anyOf next to oneOf");
  for (const key of Object.keys(node)) {
    if (key === keyword || (ANNOTATIONS as readonly string[]).includes(key)) continue;
    // zod puts the shared `type` next to the options of a discriminated union in some versions; it adds nothing.
    if (key === "type" && node.type === "object") continue;
    throw new Refused(location, `${key} next to ${keyword}`, "move the keyword into each option");
  }
  const options = node[keyword];
  if (!Array.isArray(options) || options.length === 0) throw new Refused(at(location, keyword), `a ${keyword} that is not a non-empty list`);
  const converted = options.map((option, index) => convertNode(option, at(at(location, keyword), index, `(option ${index + 1})`)));
  if (node.type === "object" && !converted.every((option) => kindsOf(option).size === 1 && kindsOf(option).has("object"))) {
    throw new Refused(location, `type next to ${keyword}`, "move the keyword into each option");
  }
  if (keyword === "anyOf" && !pairwiseDisjoint(converted)) {
    throw new Refused(
      location,
      "anyOf (a union whose options may overlap)",
      "use a discriminated union (a literal property that tells the options apart) or an enum",
    );
  }
  const result: OneOfSchemaNode = { oneOf: converted };
  return withAnnotations(result, node, location);
}

/** `type: ["string", "number"]`: a union of bare types, which never overlap once integer folds into number. */
function convertTypeUnion(node: Record<string, unknown>, types: readonly TypeName[], location: Location): ArgsSchemaNode {
  for (const key of Object.keys(node)) {
    if (key === "type" || (ANNOTATIONS as readonly string[]).includes(key)) continue;
    throw new Refused(location, `${key} on a union of types`, "write the union as options, each with its own keywords");
  }
  const options = types.map((type, index) => convertNode({ type }, at(at(location, "type"), index, `(option ${index + 1})`)));
  return withAnnotations({ oneOf: options } satisfies OneOfSchemaNode, node, location);
}

type Kind = "string" | "number" | "boolean" | "array" | "object";

function kindsOf(node: ArgsSchemaNode): Set<Kind> {
  if ("oneOf" in node) return new Set(node.oneOf.flatMap((option) => [...kindsOf(option)]));
  return new Set([node.type === "integer" ? "number" : node.type]);
}

function pairwiseDisjoint(options: readonly ArgsSchemaNode[]): boolean {
  for (let first = 0; first < options.length; first += 1) {
    for (let second = first + 1; second < options.length; second += 1) {
      if (!disjoint(options[first]!, options[second]!)) return false;
    }
  }
  return true;
}

/** True only when no value can match both (a conservative answer: "maybe" counts as overlapping). */
function disjoint(first: ArgsSchemaNode, second: ArgsSchemaNode): boolean {
  if ("oneOf" in first) return first.oneOf.every((option) => disjoint(option, second));
  if ("oneOf" in second) return second.oneOf.every((option) => disjoint(first, option));
  const firstKinds = kindsOf(first);
  if (![...kindsOf(second)].some((kind) => firstKinds.has(kind))) return true;
  const firstValues = literalValues(first);
  const secondValues = literalValues(second);
  if (firstValues !== undefined && secondValues !== undefined) return !firstValues.some((value) => secondValues.includes(value));
  if (first.type === "object" && second.type === "object") return hasDiscriminator(first, second);
  return false;
}

function literalValues(node: ArgsSchemaNode): readonly (string | number)[] | undefined {
  if ("oneOf" in node) return undefined;
  return node.type === "string" || node.type === "number" || node.type === "integer" ? node.enum : undefined;
}

/** Some property both require, whose literal values do not overlap (`kind: "a"` against `kind: "b"`). */
function hasDiscriminator(first: ObjectSchemaNode, second: ObjectSchemaNode): boolean {
  const secondRequired = new Set(second.required ?? []);
  for (const name of first.required ?? []) {
    if (!secondRequired.has(name)) continue;
    const firstValues = literalValues(first.properties![name]!);
    const secondValues = literalValues(second.properties![name]!);
    if (firstValues !== undefined && secondValues !== undefined && !firstValues.some((value) => secondValues.includes(value))) {
      return true;
    }
  }
  return false;
}
