import type { StandardSchemaV1 } from "@standard-schema/spec";
import { summarizeIssues } from "@pedelec/protocol/issue-summary";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { toolArgsSchemaSchema, type ObjectSchemaNode } from "@pedelec/protocol/tool-schema";
import type { ToolHandler } from "../types.js";
import { exportJsonSchema, isStandardSchema } from "./standard-schema.js";
import { argsSchemaValidator, standardSchemaValidator, type ArgsValidator } from "./tool-args-check.js";
import { toArgsSchema } from "./to-args-schema.js";

/**
 * One place that reads tool definitions (from `defineTool`, `createSession` and `resumeSession`): a tool gives its
 * arguments either as `argsSchema` (the JSON subset, sent as is) or as `args` (a Standard Schema, converted to the
 * subset through its own JSON Schema export). Plain JavaScript callers can pass anything, so nothing is assumed.
 */

/** What the page keeps of its tools: never sent anywhere. */
export interface PageTools {
  /** The tools' own handlers, by name. */
  readonly inlineHandlers: ReadonlyMap<string, ToolHandler>;
  /** The page-side argument check of every tool, by name. */
  readonly argsValidators: ReadonlyMap<string, ArgsValidator>;
}

/** Conversions already made for a tool object (by `defineTool`), so `createSession` does not repeat them. */
const converted = new WeakMap<object, ObjectSchemaNode>();

/**
 * The argsSchema a Standard Schema tool sends to Core. Throws `INVALID_INPUT` naming the tool, the property and the
 * feature when the schema cannot be expressed in the subset.
 */
export function convertStandardSchemaTool(tool: Record<string, unknown>): ObjectSchemaNode {
  const known = converted.get(tool);
  if (known !== undefined) return known;
  const name = toolLabel(tool);
  const schema = tool.args;
  if (!isStandardSchema(schema)) {
    throw new PedelecError(
      "INVALID_INPUT",
      `tool ${name}: args must be a Standard Schema (a zod, valibot or arktype schema, or any object with "~standard" version 1)`,
    );
  }
  const exported = exportJsonSchema(schema, tool.jsonSchema);
  if (!exported.ok) {
    throw new PedelecError("INVALID_INPUT", `tool ${name}: args cannot be described as JSON Schema: ${exported.reason}`, {
      tool: name,
    });
  }
  const conversion = toArgsSchema(exported.jsonSchema);
  if (!conversion.ok) {
    const { feature, path, schemaPath, hint } = conversion.refusal;
    const where = path === "(root)" ? "args" : `args.${path}`;
    throw new PedelecError(
      "INVALID_INPUT",
      `tool ${name}: ${where} uses ${feature}, which tool arguments do not support${hint === undefined ? "" : `; ${hint}`}`,
      { tool: name, feature, path, schemaPath, source: exported.source },
    );
  }
  // The protocol's own schema has the last word, so what passes here is what createSession accepts.
  const parsed = toolArgsSchemaSchema.safeParse(conversion.schema);
  if (!parsed.success) {
    const summary = summarizeIssues(parsed.error.issues);
    throw new PedelecError("INVALID_INPUT", `tool ${name}: args converted to an invalid argsSchema: ${summary.message}`, summary.details);
  }
  converted.set(tool, conversion.schema);
  return conversion.schema;
}

/**
 * Checks the parts `defineTool` can check alone: exactly one of `args` and `argsSchema`, and for `args` that the
 * schema converts. The JSON form is checked in full by `createSession`, as before.
 */
export function checkToolDefinition(tool: unknown): void {
  if (typeof tool !== "object" || tool === null) {
    throw new PedelecError("INVALID_INPUT", "defineTool takes a tool definition object");
  }
  const record = tool as Record<string, unknown>;
  exactlyOneSchema(record, `tool ${toolLabel(record)}`);
  if (record.handler !== undefined && typeof record.handler !== "function") {
    throw new PedelecError("INVALID_INPUT", `tool ${toolLabel(record)}: handler must be a function`);
  }
  if (record.args !== undefined) convertStandardSchemaTool(record);
}

/**
 * The manifest entry of one tool (what Core gets: no handler, no Standard Schema) plus what the page keeps. `label`
 * names the tool in messages (`skills.tools[2]`).
 */
export function splitTool(tool: unknown, label: string): { entry: unknown; name?: string; handler?: ToolHandler; validator?: ArgsValidator } {
  if (typeof tool !== "object" || tool === null) return { entry: tool };
  const { handler, args, jsonSchema, ...rest } = tool as Record<string, unknown>;
  if (handler !== undefined && typeof handler !== "function") {
    throw new PedelecError("INVALID_INPUT", `${label}.handler must be a function`);
  }
  exactlyOneSchema(tool as Record<string, unknown>, label);
  const entry: Record<string, unknown> = withoutUndefined(rest);
  let validator: ArgsValidator | undefined;
  if (args !== undefined) {
    entry.argsSchema = convertStandardSchemaTool(tool as Record<string, unknown>);
    validator = standardSchemaValidator(args as StandardSchemaV1);
  } else if (entry.argsSchema !== undefined) {
    // Checked by the protocol schema before any call can arrive; compiled on the first call.
    validator = argsSchemaValidator(entry.argsSchema as ObjectSchemaNode);
  }
  const name = typeof entry.name === "string" ? entry.name : undefined;
  return {
    entry,
    ...(name === undefined ? {} : { name }),
    ...(typeof handler === "function" ? { handler: handler as ToolHandler } : {}),
    ...(validator === undefined ? {} : { validator }),
  };
}

/** Splits a list of tools; `labelPrefix` is where the list sits in the caller's input, e.g. `skills.tools`. */
export function splitTools(tools: readonly unknown[], labelPrefix: string): PageTools & { manifest: unknown[] } {
  const inlineHandlers = new Map<string, ToolHandler>();
  const argsValidators = new Map<string, ArgsValidator>();
  const manifest = tools.map((tool, index) => {
    const split = splitTool(tool, `${labelPrefix}[${index}]`);
    if (split.name !== undefined) {
      if (split.handler !== undefined) inlineHandlers.set(split.name, split.handler);
      if (split.validator !== undefined) argsValidators.set(split.name, split.validator);
    }
    return split.entry;
  });
  return { manifest, inlineHandlers, argsValidators };
}

function exactlyOneSchema(tool: Record<string, unknown>, label: string): void {
  if (tool.args !== undefined && tool.argsSchema !== undefined) {
    throw new PedelecError("INVALID_INPUT", `${label}: give either args (a Standard Schema) or argsSchema (JSON Schema), not both`);
  }
  if (tool.jsonSchema !== undefined && tool.args === undefined) {
    throw new PedelecError("INVALID_INPUT", `${label}: jsonSchema goes with args (a Standard Schema); use argsSchema for a JSON Schema alone`);
  }
}

function toolLabel(tool: Record<string, unknown>): string {
  return typeof tool.name === "string" ? tool.name : "(unnamed)";
}

// Optional fields left undefined are dropped, so the strict schema and the wire see only what was set.
export function withoutUndefined(record: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(record).filter(([, value]) => value !== undefined));
}
