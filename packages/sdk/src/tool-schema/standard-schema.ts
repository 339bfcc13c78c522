import type { StandardJSONSchemaV1, StandardSchemaV1 } from "@standard-schema/spec";

/**
 * Reads Standard Schema objects (zod 4, valibot, arktype, …) through what the object itself exposes. The SDK never
 * imports a schema library: a library the app does not use costs it nothing, and any Standard Schema v1 works.
 */

/** True for an object (or function: arktype's types are callable) carrying Standard Schema v1 properties. */
export function isStandardSchema(value: unknown): value is StandardSchemaV1 {
  if ((typeof value !== "object" && typeof value !== "function") || value === null) return false;
  const props = (value as { "~standard"?: unknown })["~standard"];
  return (
    typeof props === "object" &&
    props !== null &&
    (props as { version?: unknown }).version === 1 &&
    typeof (props as { validate?: unknown }).validate === "function"
  );
}

/** The schema library's name as it reports it (`"zod"`, `"valibot"`, `"arktype"`), for messages. */
export function vendorOf(schema: StandardSchemaV1): string {
  const vendor = schema["~standard"].vendor;
  return typeof vendor === "string" && vendor.length > 0 ? vendor : "the schema library";
}

/** Where a tool's JSON Schema came from, for messages. */
export type JsonSchemaSource = "jsonSchema option" | "~standard.jsonSchema" | "toJsonSchema()" | "toJSONSchema()";

export type JsonSchemaExport = { ok: true; jsonSchema: Record<string, unknown>; source: JsonSchemaSource } | { ok: false; reason: string };

// Both drafts describe the keywords of the subset the same way; 2020-12 first, draft-07 for a library that has only it.
const TARGETS = ["draft-2020-12", "draft-07"] as const;

/**
 * The JSON Schema of what `schema` accepts (its input side: the agent sends input, the handler gets the output).
 * In order: the app's own `jsonSchema`, the Standard JSON Schema converter (`~standard.jsonSchema`, zod ≥ 4.2,
 * arktype ≥ 2.1.2, valibot through `toStandardJsonSchema()`), then a converter method on the object (arktype's
 * `toJsonSchema()`, zod's `toJSONSchema()`).
 */
export function exportJsonSchema(schema: StandardSchemaV1, explicit: unknown): JsonSchemaExport {
  if (explicit !== undefined) {
    if (!isPlainRecord(explicit)) return { ok: false, reason: "jsonSchema must be a JSON Schema object" };
    return { ok: true, jsonSchema: explicit, source: "jsonSchema option" };
  }
  const converter = (schema["~standard"] as Partial<StandardJSONSchemaV1.Props>).jsonSchema;
  if (typeof converter?.input === "function") {
    return fromConverter("~standard.jsonSchema", (target) => converter.input({ target }));
  }
  const methods = schema as { toJsonSchema?: unknown; toJSONSchema?: unknown };
  if (typeof methods.toJsonSchema === "function") {
    const toJsonSchema = methods.toJsonSchema as (options?: unknown) => unknown;
    return fromConverter("toJsonSchema()", (target) => toJsonSchema.call(schema, { target }));
  }
  if (typeof methods.toJSONSchema === "function") {
    const toJSONSchema = methods.toJSONSchema as (options?: unknown) => unknown;
    return fromConverter("toJSONSchema()", (target) => toJSONSchema.call(schema, { target, io: "input" }));
  }
  const vendor = vendorOf(schema);
  const hint =
    vendor === "valibot"
      ? 'wrap it with toStandardJsonSchema(schema) from @valibot/to-json-schema, or pass jsonSchema: toJsonSchema(schema, { typeMode: "input" })'
      : "pass its JSON Schema as jsonSchema";
  return { ok: false, reason: `this ${vendor} schema offers no JSON Schema export (~standard.jsonSchema); ${hint}` };
}

function fromConverter(source: JsonSchemaSource, convert: (target: (typeof TARGETS)[number]) => unknown): JsonSchemaExport {
  let firstFailure: unknown;
  for (const target of TARGETS) {
    try {
      const jsonSchema = convert(target);
      if (!isPlainRecord(jsonSchema)) return { ok: false, reason: `${source} did not return a JSON Schema object` };
      return { ok: true, jsonSchema, source };
    } catch (error) {
      firstFailure ??= error;
    }
  }
  const message = firstFailure instanceof Error ? firstFailure.message : String(firstFailure);
  return { ok: false, reason: `${source} could not convert it: ${message}` };
}

export function isPlainRecord(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const prototype = Object.getPrototypeOf(value) as unknown;
  return prototype === Object.prototype || prototype === null;
}
