import { z } from "zod";
import { withinJsonLimits } from "./bounded-json-schema.js";
import { checkJsonLimits } from "./json-limits.js";
import { findUnsupportedPattern } from "./linear-regex.js";

/**
 * The supported subset of JSON Schema for tool arguments. Unknown keywords are rejected so an app learns at
 * createSession that a constraint would not be enforced, instead of finding out from a misbehaving agent.
 */
export type ArgsSchemaNode = StringSchemaNode | NumberSchemaNode | BooleanSchemaNode | ArraySchemaNode | ObjectSchemaNode | OneOfSchemaNode;

interface SchemaAnnotations {
  description?: string;
  default?: unknown;
  examples?: unknown[];
}
export interface StringSchemaNode extends SchemaAnnotations {
  type: "string";
  enum?: string[];
  minLength?: number;
  maxLength?: number;
  pattern?: string;
}
export interface NumberSchemaNode extends SchemaAnnotations {
  type: "number" | "integer";
  enum?: number[];
  minimum?: number;
  maximum?: number;
}
export interface BooleanSchemaNode extends SchemaAnnotations {
  type: "boolean";
}
export interface ArraySchemaNode extends SchemaAnnotations {
  type: "array";
  items?: ArgsSchemaNode;
  minItems?: number;
  maxItems?: number;
  uniqueItems?: boolean;
}
export interface ObjectSchemaNode extends SchemaAnnotations {
  type: "object";
  properties?: Record<string, ArgsSchemaNode>;
  required?: string[];
  additionalProperties?: boolean;
}
export interface OneOfSchemaNode extends SchemaAnnotations {
  oneOf: ArgsSchemaNode[];
}

const annotations = {
  description: z.string().optional(),
  default: z.json().optional(),
  examples: z.array(z.json()).optional(),
};
const count = z.number().int().min(0);
/** An enum that repeats a value is not a schema Core's Ajv accepts (its meta-schema wants enum items unique). */
const distinct = (values: readonly (string | number)[]): boolean => new Set(values).size === values.length;

const validRegex = z.string().refine((pattern) => {
  try {
    new RegExp(pattern, "u");
    return true;
  } catch {
    return false;
  }
}, "is not a valid regular expression");

export const argsSchemaNodeSchema: z.ZodType<ArgsSchemaNode> = z.lazy(() =>
  z.union([
    z.strictObject({
      type: z.literal("string"),
      enum: z.array(z.string()).min(1).refine(distinct, "must not repeat a value").optional(),
      minLength: count.optional(),
      maxLength: count.optional(),
      pattern: validRegex.optional(),
      ...annotations,
    }),
    z.strictObject({
      type: z.enum(["number", "integer"]),
      enum: z.array(z.number()).min(1).refine(distinct, "must not repeat a value").optional(),
      minimum: z.number().optional(),
      maximum: z.number().optional(),
      ...annotations,
    }),
    z.strictObject({ type: z.literal("boolean"), ...annotations }),
    z.strictObject({
      type: z.literal("array"),
      items: argsSchemaNodeSchema.optional(),
      minItems: count.optional(),
      maxItems: count.optional(),
      uniqueItems: z.boolean().optional(),
      ...annotations,
    }),
    objectNodeSchema,
    z.strictObject({ oneOf: z.array(argsSchemaNodeSchema).min(1), ...annotations }),
  ]),
);

const objectNodeSchema: z.ZodType<ObjectSchemaNode> = z.lazy(() =>
  z
    .strictObject({
      type: z.literal("object"),
      properties: z.record(z.string(), argsSchemaNodeSchema).optional(),
      required: z.array(z.string()).optional(),
      additionalProperties: z.boolean().optional(),
      ...annotations,
    })
    .refine(
      (node) => (node.required ?? []).every((name) => node.properties !== undefined && name in node.properties),
      "every name in 'required' must be a declared property",
    ),
);

/**
 * The root of a tool's argsSchema is always an object schema. Its patterns are checked against the linear-time rule
 * by skillsManifestSchema, where the tool's name and the other tools' patterns are known.
 */
export const toolArgsSchemaSchema = objectNodeSchema;

interface PatternSite {
  /** Where the pattern sits, from the argsSchema root, e.g. `["properties", "title", "pattern"]`. */
  path: (string | number)[];
  pattern: string;
}

/** Every `pattern` in an argsSchema, in document order (iterative, so nesting depth costs no stack). */
function patternSites(argsSchema: ArgsSchemaNode): PatternSite[] {
  const sites: PatternSite[] = [];
  const pending: { node: ArgsSchemaNode; path: (string | number)[] }[] = [{ node: argsSchema, path: [] }];
  while (pending.length > 0) {
    const { node, path } = pending.pop()!;
    const children: { node: ArgsSchemaNode; path: (string | number)[] }[] = [];
    if ("oneOf" in node) {
      for (const [index, option] of node.oneOf.entries()) children.push({ node: option, path: [...path, "oneOf", index] });
    } else if (node.type === "string" && node.pattern !== undefined) {
      sites.push({ path: [...path, "pattern"], pattern: node.pattern });
    } else if (node.type === "array" && node.items !== undefined) {
      children.push({ node: node.items, path: [...path, "items"] });
    } else if (node.type === "object") {
      for (const [name, property] of Object.entries(node.properties ?? {})) {
        children.push({ node: property, path: [...path, "properties", name] });
      }
    }
    pending.push(...children.reverse());
  }
  return sites;
}

/** Tool names: start with a letter; letters, digits, `_`, `.`, `-`. */
export const toolNameSchema = z
  .string()
  .max(64)
  .regex(/^[A-Za-z][A-Za-z0-9_.-]*$/, "must start with a letter and use only letters, digits, '_', '.', '-'");

export const DEFAULT_TOOL_TIMEOUT_MS = 60_000;
export const MAX_TOOL_TIMEOUT_MS = 30 * 60_000;

/** A tool as it is sent to Core (handlers stay in the page). */
export const toolManifestEntrySchema = z.strictObject({
  name: toolNameSchema,
  description: z.string().min(1).max(4000),
  /** Depth-checked before the recursive node schema runs (MAX_JSON_DEPTH). */
  argsSchema: withinJsonLimits(toolArgsSchemaSchema),
  timeoutMs: z.number().int().min(1).max(MAX_TOOL_TIMEOUT_MS).optional(),
});
export type ToolManifestEntry = z.infer<typeof toolManifestEntrySchema>;

/** All argsSchemas of one session together hold at most this many JSON values (objects, arrays, keys' values). */
export const MAX_MANIFEST_SCHEMA_VALUES = 10_000;

function manifestSchemaValues(skills: { tools: readonly { argsSchema: unknown }[] }): number {
  let total = 0;
  for (const tool of skills.tools) {
    const measured = checkJsonLimits(tool.argsSchema);
    total += measured.ok ? measured.nodes : MAX_MANIFEST_SCHEMA_VALUES + 1;
  }
  return total;
}

export const skillsManifestSchema = z
  .strictObject({
    guidance: z.string().max(200_000),
    tools: z.array(toolManifestEntrySchema).max(200),
  })
  .refine((skills) => new Set(skills.tools.map((tool) => tool.name)).size === skills.tools.length, {
    message: "tool names must be unique within a session",
    path: ["tools"],
  })
  .refine((skills) => manifestSchemaValues(skills) <= MAX_MANIFEST_SCHEMA_VALUES, {
    // Core compiles every argsSchema on its only thread at createSession; this bounds that to about a second.
    message: `the tools' argsSchemas together may hold at most ${MAX_MANIFEST_SCHEMA_VALUES} JSON values`,
    path: ["tools"],
  })
  .superRefine(
    (skills, context) => {
      // Core runs these patterns on its only thread, so each must run in linear time (see linear-regex.ts).
      const sites = skills.tools.flatMap((tool, index) => patternSites(tool.argsSchema).map((site) => ({ ...site, tool, index })));
      const refused = findUnsupportedPattern(sites);
      if (!refused) return;
      const { tool, index, path, pattern } = refused.entry;
      context.addIssue({
        code: "custom",
        path: ["tools", index],
        message: `tool ${tool.name}: ${["argsSchema", ...path].join(".")} ${JSON.stringify(pattern)} is not supported: ${refused.reason}`,
      });
    },
    // Only once everything else is valid: no compile work for a manifest that is refused anyway, one message per pattern.
    { when: (payload) => payload.issues.length === 0 },
  );
export type SkillsManifest = z.infer<typeof skillsManifestSchema>;
