import { z } from "zod";

/**
 * The supported subset of JSON Schema for tool arguments. Unknown keywords are rejected so an app learns at
 * createSession that a constraint would not be enforced, instead of finding out from a misbehaving agent.
 */
export type ArgsSchemaNode =
  | StringSchemaNode
  | NumberSchemaNode
  | BooleanSchemaNode
  | ArraySchemaNode
  | ObjectSchemaNode
  | OneOfSchemaNode;

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
      enum: z.array(z.string()).min(1).optional(),
      minLength: count.optional(),
      maxLength: count.optional(),
      pattern: validRegex.optional(),
      ...annotations,
    }),
    z.strictObject({
      type: z.enum(["number", "integer"]),
      enum: z.array(z.number()).min(1).optional(),
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

/** The root of a tool's argsSchema is always an object schema. */
export const toolArgsSchemaSchema = objectNodeSchema;

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
  argsSchema: toolArgsSchemaSchema,
  timeoutMs: z.number().int().min(1).max(MAX_TOOL_TIMEOUT_MS).optional(),
});
export type ToolManifestEntry = z.infer<typeof toolManifestEntrySchema>;

export const skillsManifestSchema = z
  .strictObject({
    guidance: z.string().max(200_000),
    tools: z.array(toolManifestEntrySchema).max(200),
  })
  .refine((skills) => new Set(skills.tools.map((tool) => tool.name)).size === skills.tools.length, {
    message: "tool names must be unique within a session",
    path: ["tools"],
  });
export type SkillsManifest = z.infer<typeof skillsManifestSchema>;
