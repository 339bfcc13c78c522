import type { StandardSchemaV1 } from "@standard-schema/spec";
import { checkToolDefinition } from "./tool-schema/page-tools.js";
import type { JsonSchemaToolDefinition, ToolArgsStandardSchema, ToolDefinition, ToolDefinitionBase, ToolHandlerContext } from "./types.js";

/**
 * What `defineTool()` takes for a tool whose arguments are a Standard Schema: the schema's own type is kept, so the
 * handler's arguments are typed from it.
 *
 * @example
 * ```ts
 * import { z } from "zod";
 * const schema = z.object({ title: z.string() });
 * const input: StandardSchemaToolInput<"add_note", typeof schema> = { name: "add_note", description: "Add a note.", args: schema };
 * ```
 */
export interface StandardSchemaToolInput<TToolName extends string, TSchema extends ToolArgsStandardSchema>
  extends Omit<ToolDefinitionBase<TToolName, StandardSchemaV1.InferOutput<TSchema>>, "handler"> {
  /** The arguments' schema (zod 4, valibot, arktype, or any Standard Schema v1); its root must describe an object. */
  readonly args: TSchema;
  /** The schema's JSON Schema, for a library whose schemas do not export one (see `StandardSchemaToolDefinition`). */
  readonly jsonSchema?: object;
  /** Not with `args`. */
  readonly argsSchema?: undefined;
  /** The tool's own handler; its arguments are the schema's output. */
  handler?(args: StandardSchemaV1.InferOutput<TSchema>, context: ToolHandlerContext<TToolName>): unknown;
}

/**
 * Declares a frontend tool and returns it unchanged, keeping the name's literal type and the arguments' type, so
 * `createSession({ skills: { tools: [tool] } })` yields a session whose `onTool(name, …)` only accepts declared names
 * and types each handler's arguments.
 *
 * The arguments are described by exactly one of:
 * - `args`: a Standard Schema (zod 4, valibot, arktype). It is converted here to the JSON Schema subset Core enforces,
 *   through the schema's own JSON Schema export (`~standard.jsonSchema`; for valibot wrap the schema with
 *   `toStandardJsonSchema()` from `@valibot/to-json-schema`, or pass `jsonSchema: toJsonSchema(schema, { typeMode:
 *   "input" })`). A schema the subset cannot express throws a `PedelecError` (`INVALID_INPUT`) right here, naming the
 *   property and the feature. The handler's arguments are the schema's output, and the page checks every call with the
 *   schema before a handler runs (`TOOL_ARGS_INVALID` otherwise).
 * - `argsSchema`: the JSON Schema subset itself, checked in full by `createSession()`; handler arguments are `unknown`.
 *
 * The SDK depends on no schema library: it uses what the schema object exposes.
 *
 * @example
 * ```ts
 * import { z } from "zod";
 * const addNote = defineTool({
 *   name: "add_note",
 *   description: "Add a note.",
 *   args: z.object({ title: z.string().min(1), body: z.string().optional() }),
 *   handler: async (args) => ({ id: await saveNote(args.title, args.body ?? "") }),
 * });
 * const addTodo = defineTool({
 *   name: "add_todo",
 *   description: "Add an item to the todo list.",
 *   argsSchema: { type: "object", properties: { title: { type: "string" } }, required: ["title"] },
 * });
 * const session = await pedelec.createSession({ skills: { guidance: "", tools: [addNote, addTodo] } });
 * session.onTool("add_todo", (args) => ({ added: args }));
 * ```
 */
export function defineTool<const TToolName extends string, TSchema extends ToolArgsStandardSchema>(
  tool: StandardSchemaToolInput<TToolName, TSchema>,
): ToolDefinition<TToolName, StandardSchemaV1.InferOutput<TSchema>>;
export function defineTool<const TToolName extends string>(tool: JsonSchemaToolDefinition<TToolName>): ToolDefinition<TToolName>;
export function defineTool(tool: ToolDefinition): ToolDefinition {
  checkToolDefinition(tool);
  return tool;
}
