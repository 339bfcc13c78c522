import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import type { ThreadBridge } from "@pedelec/core-client/thread-bridge";
import { CORE_VERSION } from "@pedelec/core-client/core-version";
import { remedyFor } from "@pedelec/protocol/error-remedies";
import { summarizeIssues } from "@pedelec/protocol/issue-summary";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { MAX_RUN_TIMEOUT_MS, scriptRunSpecSchema } from "@pedelec/protocol/script-run";
import { SESSION_SCRIPT_TOOL, SESSION_TOOL_SERVER_NAME } from "@pedelec/protocol/session-tool-server";

/** What the server needs of the session: its page tools and its script runner, as the thread's own process. */
export type SessionToolAccess = Pick<ThreadBridge, "listTools" | "callTool" | "runScript">;

/** Pedelec's script runner as a tool of the server: `pedelec-ts-runtime run`, without a shell. */
export const RUN_SCRIPT_TOOL = SESSION_SCRIPT_TOOL;

const RUN_SCRIPT_DESCRIPTION = [
  "Runs JavaScript or TypeScript with Pedelec's pinned, sandboxed Deno in the session's workspace, and answers with the",
  "exit code and the output. Give exactly one of `source` (the script's text, run from the workspace root) and `entry`",
  "(a workspace-relative file). Scripts may read and write only the workspace; no network, environment, subprocesses,",
  'FFI, npm/jsr or remote imports. `import { workspaceRoot, assetsDir, threadId } from "pedelec:workspace"` gives the',
  "workspace paths. The only way to run code in this session: never fall back to another runtime.",
].join(" ");

const RUN_SCRIPT_INPUT_SCHEMA: Tool["inputSchema"] = {
  type: "object",
  properties: {
    source: { type: "string", description: "The script's source text." },
    entry: { type: "string", description: "A workspace-relative path of the script to run." },
    args: { type: "array", items: { type: "string" }, description: "What the script gets as Deno.args." },
    importMap: { type: "string", description: "A workspace-relative import map." },
    timeoutMs: { type: "integer", minimum: 1, maximum: MAX_RUN_TIMEOUT_MS, description: "The run's time limit (default 60 s)." },
  },
  additionalProperties: false,
};

/**
 * The MCP server of one session: its page tools (name, description, argsSchema as inputSchema) and `run_script`. A call
 * goes the way `pedelec-cli tool-call` goes (Core validates the arguments, the page runs its handler); the result comes
 * back as JSON text and `structuredContent`, and a Pedelec error as an `isError` result carrying its code and remedy.
 * A call the client cancels (MCP cancellation, or the CLI's timeout) closes its own connection to Core, which settles
 * the call as abandoned and tells the page's handler at once.
 */
export function createSessionMcpServer(access: SessionToolAccess): Server {
  const server = new Server({ name: SESSION_TOOL_SERVER_NAME, version: CORE_VERSION }, { capabilities: { tools: {} } });
  // The page's tool names as last listed: whether `run_script` is the page's own or the script runner.
  let pageToolNames: ReadonlySet<string> | undefined;
  const listPageTools = async () => {
    const tools = await access.listTools();
    pageToolNames = new Set(tools.map((tool) => tool.name));
    return tools;
  };
  server.setRequestHandler(ListToolsRequestSchema, async () => {
    const pageTools = await listPageTools().catch((error: unknown) => {
      // No tools to offer at all (a wrong capability, Core gone): an MCP error that names Pedelec's code and remedy.
      const failure = errorBody(PedelecError.from(error, "SESSION_ERROR"));
      throw new McpError(ErrorCode.InternalError, `${failure.code}: ${failure.message}`, failure);
    });
    const tools: Tool[] = pageTools.map((tool) => ({
      name: tool.name,
      description: tool.description,
      inputSchema: { ...tool.argsSchema, type: "object" } as Tool["inputSchema"],
    }));
    // A page tool of the same name is the app's choice; it keeps the name, and scripts stay reachable through pedelec-ts-runtime.
    if (!pageTools.some((tool) => tool.name === RUN_SCRIPT_TOOL)) {
      tools.push({ name: RUN_SCRIPT_TOOL, description: RUN_SCRIPT_DESCRIPTION, inputSchema: RUN_SCRIPT_INPUT_SCHEMA });
    }
    return { tools };
  });
  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const { name } = request.params;
    const args = request.params.arguments ?? {};
    try {
      const names = pageToolNames ?? new Set((await listPageTools()).map((tool) => tool.name));
      if (name === RUN_SCRIPT_TOOL && !names.has(RUN_SCRIPT_TOOL)) {
        return await runScript(access, args, extra.signal);
      }
      return resultOf(await access.callTool(name, args, extra.signal));
    } catch (error) {
      return errorResult(PedelecError.from(error, "SESSION_ERROR"));
    }
  });
  return server;
}

async function runScript(access: SessionToolAccess, args: Record<string, unknown>, signal: AbortSignal): Promise<CallToolResult> {
  const spec = scriptRunSpecSchema.safeParse(args);
  if (!spec.success) {
    const summary = summarizeIssues(spec.error.issues);
    return errorResult(new PedelecError("DENO_ENTRY_INVALID", `run_script arguments are invalid: ${summary.message}`, summary.details));
  }
  const report = await access.runScript(spec.data, signal);
  const failed = report.termination !== "exited" || report.exitCode !== 0;
  return { content: [{ type: "text", text: JSON.stringify(report) }], structuredContent: { ...report }, ...(failed ? { isError: true } : {}) };
}

function resultOf(result: unknown): CallToolResult {
  const structured = typeof result === "object" && result !== null && !Array.isArray(result) ? (result as Record<string, unknown>) : { result };
  return { content: [{ type: "text", text: JSON.stringify(result) }], structuredContent: structured };
}

/** What the agent reads of a failure: the code, the message, what to do about it, and the details that say why. */
function errorBody(error: PedelecError) {
  const wire = error.toWire();
  return { ...wire, remedy: remedyFor(wire.code, wire.details) };
}

function errorResult(error: PedelecError): CallToolResult {
  return { isError: true, content: [{ type: "text", text: JSON.stringify({ error: errorBody(error) }) }] };
}
