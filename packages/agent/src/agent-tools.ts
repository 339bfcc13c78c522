import { z } from "zod";
import type { Activity } from "@pedelec/protocol/session-events";
import { summarizeIssues } from "@pedelec/protocol/issue-summary";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { MAX_RUN_TIMEOUT_MS } from "@pedelec/protocol/script-run";
import type { ThreadBridge, PageTool } from "@pedelec/core-client/thread-bridge";
import type { OllamaToolDefinition } from "./ollama-chat-schema.js";
import type { TurnBudget } from "./turn-limits.js";
import {
  DEFAULT_LIST_DEPTH,
  MAX_LIST_DEPTH,
  MAX_WRITE_FILE_BYTES,
  listWorkspaceFiles,
  readWorkspaceFile,
  writeWorkspaceFile,
} from "./workspace-files.js";

/** What the model reads back from a tool call. */
export type ToolOutcome = { ok: true; result: unknown } | { ok: false; error: { code: string; message: string } };

interface BuiltInTool<T extends z.ZodType> {
  description: string;
  argsSchema: T;
  kind: Activity["kind"];
  title(args: z.infer<T>): string;
  run(args: z.infer<T>, context: ToolContext): Promise<unknown>;
}

/** What a built-in tool runs with: the workspace, Core, the turn's budget, and the turn's end. */
interface ToolContext {
  workspace: string;
  bridge: ThreadBridge | null;
  budget: TurnBudget;
  signal: AbortSignal;
}

function builtIn<T extends z.ZodType>(tool: BuiltInTool<T>): BuiltInTool<z.ZodType> {
  return tool as unknown as BuiltInTool<z.ZodType>;
}

const pathField = z.string().min(1).max(4096).describe("A path relative to the workspace, with /");

/** The tools every turn has, besides the page's. Their names win over a page tool of the same name. */
const BUILT_IN_TOOLS: Record<string, BuiltInTool<z.ZodType>> = {
  workspace_list_files: builtIn({
    description: `List files and folders of the workspace (symlinks are not listed; at most 500 entries).`,
    argsSchema: z.strictObject({
      path: pathField.optional().describe("The folder to list, relative to the workspace; the workspace itself if omitted"),
      depth: z.number().int().min(1).max(MAX_LIST_DEPTH).optional().describe(`How many levels deep to list (default ${DEFAULT_LIST_DEPTH})`),
    }),
    kind: "file-read",
    title: (args) => `list ${args.path ?? "."}`,
    run: (args, { workspace }) => listWorkspaceFiles(workspace, args.path, args.depth),
  }),
  workspace_read_file: builtIn({
    description: "Read a UTF-8 text file of the workspace (up to 256 KiB).",
    argsSchema: z.strictObject({ path: pathField }),
    kind: "file-read",
    title: (args) => `read ${args.path}`,
    run: (args, { workspace }) => readWorkspaceFile(workspace, args.path),
  }),
  workspace_write_file: builtIn({
    description: "Create or replace a text file of the workspace with the given content; missing folders are created.",
    argsSchema: z.strictObject({ path: pathField, content: z.string().describe("The whole new content of the file") }),
    kind: "file-edit",
    title: (args) => `write ${args.path}`,
    run: async (args, { workspace, budget }) => {
      const bytes = Buffer.byteLength(args.content);
      // Only a write that fits may start; one that fails gives its bytes back.
      if (bytes <= MAX_WRITE_FILE_BYTES) budget.takeWrite(bytes);
      try {
        return await writeWorkspaceFile(workspace, args.path, args.content);
      } catch (error) {
        if (bytes <= MAX_WRITE_FILE_BYTES) budget.returnWrite(bytes);
        throw error;
      }
    },
  }),
  run_script: builtIn({
    description:
      "Run JavaScript or TypeScript in a sandboxed Deno inside the workspace: either a workspace file (path) or code (source). " +
      "Scripts may read and write the workspace only. Returns the exit code and the first 16 KiB of stdout and stderr.",
    argsSchema: z
      .strictObject({
        path: pathField.optional().describe("A .ts or .js file of the workspace to run"),
        source: z
          .string()
          .min(1)
          .max(1024 * 1024)
          .optional()
          .describe("Code to run instead of a file"),
        args: z
          .array(z.string().max(64 * 1024))
          .max(256)
          .optional()
          .describe("Arguments the script gets as Deno.args"),
        timeoutMs: z.number().int().min(1).max(MAX_RUN_TIMEOUT_MS).optional().describe("Time limit in milliseconds (default 60000)"),
      })
      .refine((args) => (args.path === undefined) !== (args.source === undefined), { message: "give exactly one of path and source" }),
    kind: "command",
    title: (args) => (args.path !== undefined ? `run ${args.path}` : `run a script (${(args.source ?? "").split("\n").length} lines)`),
    run: (args, { bridge, signal }) => {
      if (bridge === null)
        throw new PedelecError("IPC_UNAVAILABLE", "scripts run only inside a Pedelec session (Core is not reachable from this turn)");
      return bridge.runScript(
        {
          ...(args.path !== undefined ? { entry: args.path } : { source: args.source }),
          ...(args.args !== undefined ? { args: args.args } : {}),
          ...(args.timeoutMs !== undefined ? { timeoutMs: args.timeoutMs } : {}),
        },
        signal,
      );
    },
  }),
};

/** The names of the built-in tools. */
export const BUILT_IN_TOOL_NAMES = Object.keys(BUILT_IN_TOOLS);

/** How a call shows as an activity before it runs. */
export interface CallDescription {
  kind: Activity["kind"];
  title: string;
}

/** The tools of one turn: the built-ins and the page's, offered natively to the model and run on its calls. */
export class AgentToolbox {
  readonly #context: ToolContext;
  readonly #pageTools = new Map<string, PageTool>();

  private constructor(context: ToolContext) {
    this.#context = context;
  }

  /**
   * Loads the page's tools from Core (when the turn runs inside a session); a page tool named like a built-in is
   * skipped. Writes count against `budget`; `signal` (the turn's end) stops a script run or a page tool's wait.
   */
  static async create(
    workspace: string,
    bridge: ThreadBridge | null,
    note: (text: string) => void,
    turn: { budget: TurnBudget; signal: AbortSignal },
  ): Promise<AgentToolbox> {
    const toolbox = new AgentToolbox({ workspace, bridge, budget: turn.budget, signal: turn.signal });
    for (const tool of bridge === null ? [] : await bridge.listTools()) {
      if (Object.hasOwn(BUILT_IN_TOOLS, tool.name)) {
        note(`the page tool ${tool.name} has the name of a built-in tool and is not offered to the model`);
        continue;
      }
      toolbox.#pageTools.set(tool.name, tool);
    }
    return toolbox;
  }

  definitions(): OllamaToolDefinition[] {
    const builtIns = Object.entries(BUILT_IN_TOOLS).map(([name, tool]) => ({
      type: "function" as const,
      function: { name, description: tool.description, parameters: jsonSchemaOf(tool.argsSchema) },
    }));
    const pageTools = [...this.#pageTools.values()].map((tool) => ({
      type: "function" as const,
      function: { name: tool.name, description: tool.description, parameters: tool.argsSchema },
    }));
    return [...builtIns, ...pageTools];
  }

  describe(name: string, args: unknown): CallDescription {
    const tool = BUILT_IN_TOOLS[name];
    if (tool === undefined || !isPlainObject(args ?? {})) return { kind: tool?.kind ?? "tool", title: name };
    const parsed = tool.argsSchema.safeParse(args ?? {});
    return { kind: tool.kind, title: parsed.success ? tool.title(parsed.data) : name };
  }

  /** Runs one call; every failure becomes a result the model reads. */
  async execute(name: string, args: unknown): Promise<ToolOutcome> {
    try {
      return { ok: true, result: await this.#run(name, args) };
    } catch (error) {
      const coded = PedelecError.from(error, "TOOL_HANDLER_ERROR");
      return { ok: false, error: { code: coded.code, message: coded.message } };
    }
  }

  async #run(name: string, given: unknown): Promise<unknown> {
    // Missing arguments are no arguments (Ollama leaves them out of a call of a tool without parameters).
    const args = given ?? {};
    const tool = BUILT_IN_TOOLS[name];
    const exists = tool !== undefined || (this.#pageTools.has(name) && this.#context.bridge !== null);
    if (exists && !isPlainObject(args)) {
      const what = Array.isArray(args) ? "an array" : `a ${typeof args}`;
      throw new PedelecError("TOOL_ARGS_INVALID", `invalid arguments for ${name}: they must be a JSON object of named arguments, not ${what}`);
    }
    if (tool !== undefined) {
      const parsed = tool.argsSchema.safeParse(args);
      if (!parsed.success)
        throw new PedelecError("TOOL_ARGS_INVALID", `invalid arguments for ${name}: ${summarizeIssues(parsed.error.issues).message}`);
      return tool.run(parsed.data, this.#context);
    }
    if (this.#pageTools.has(name) && this.#context.bridge !== null) return this.#context.bridge.callTool(name, args, this.#context.signal);
    const known = [...BUILT_IN_TOOL_NAMES, ...this.#pageTools.keys()].join(", ");
    throw new PedelecError("TOOL_NOT_FOUND", `there is no tool named ${JSON.stringify(name)}; the tools are: ${known}`);
  }
}

/** A JSON object (what tool arguments must be), not an array, null, or a primitive. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function jsonSchemaOf(schema: z.ZodType): unknown {
  const { $schema: _schema, ...rest } = z.toJSONSchema(schema, { io: "input" }) as Record<string, unknown>;
  return rest;
}
