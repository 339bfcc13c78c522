import type { Readable, Writable } from "node:stream";
import { parseArgs, type ParseArgsConfig } from "node:util";
import { callCore } from "@pedelec/core-client/core-call";
import { locateCore } from "@pedelec/core-client/core-location";
import { CORE_VERSION } from "@pedelec/core-client/core-version";
import { checkToolCallResult } from "@pedelec/protocol/agent-command-replies";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { SESSION_TOOL_SERVER_COMMAND } from "@pedelec/protocol/session-tool-server";
import { isSessionId, isThreadCapability, THREAD_CAPABILITY_ENV } from "@pedelec/protocol/thread-access";

// Agents run this command for every tool call, so nothing on its path loads the schema library: the thread id and
// capability are checked against plain patterns and Core's answer to toolCall by a plain check (both agree with the
// protocol's schemas). Only tool-spec, asked once per tool, loads the full schema of its answer.

const AGENT_CLI_USAGE = `Usage:
  pedelec-cli --thread-id <id> tool-spec <tool-name>
  pedelec-cli --thread-id <id> tool-call <tool-name> '<json_args>'
  pedelec-cli --thread-id <id> tool-call <tool-name> -     (arguments read from stdin)
  pedelec-cli --thread-id <id> mcp                          (the thread's tools as an MCP server on stdio)
The thread id defaults to $PEDELEC_THREAD_ID; the thread's capability is read from $${THREAD_CAPABILITY_ENV}.`;

/** The flags the command takes before its words. */
const AGENT_CLI_FLAGS = {
  "thread-id": { type: "string" },
  help: { type: "boolean", short: "h" },
  version: { type: "boolean" },
} as const satisfies NonNullable<ParseArgsConfig["options"]>;

export interface AgentCliIo {
  out: (text: string) => void;
  err: (text: string) => void;
  env: NodeJS.ProcessEnv;
  /** All of standard input, read when the arguments are given as `-` (argv cannot carry more than about 128 KiB). */
  readStdin: () => Promise<string>;
  /** Standard input and output as streams, for `mcp`, which speaks MCP on them for as long as the client stays. */
  stdio?: { input: Readable; output: Writable };
}

/**
 * The agent-facing command. Results go to stdout as JSON (exit 0); failures print {"error":{code,message}} on stdout,
 * where agents read, and exit 1 (2 for usage errors). `--help` prints the usage, `--version` the version; both exit 0.
 */
export async function runAgentCli(argv: readonly string[], io: AgentCliIo): Promise<number> {
  const fail = (error: PedelecError, exitCode: number): number => {
    io.out(`${JSON.stringify({ error: { code: error.code, message: error.message } })}\n`);
    return exitCode;
  };
  let parsed: ReturnType<typeof parseArgs<{ args: string[]; options: typeof AGENT_CLI_FLAGS; allowPositionals: true; strict: true }>>;
  try {
    parsed = parseArgs({ args: [...argv], options: AGENT_CLI_FLAGS, allowPositionals: true, strict: true });
  } catch (error) {
    return fail(new PedelecError("INVALID_INPUT", `${(error as Error).message}\n${AGENT_CLI_USAGE}`), 2);
  }
  if (parsed.values.help === true) {
    io.out(`${AGENT_CLI_USAGE}\n`);
    return 0;
  }
  if (parsed.values.version === true) {
    io.out(`pedelec-cli ${CORE_VERSION}\n`);
    return 0;
  }
  const threadId = parsed.values["thread-id"] ?? io.env.PEDELEC_THREAD_ID;
  const [command, toolName, argsJson, ...extra] = parsed.positionals;
  if (!isSessionId(threadId)) {
    return fail(new PedelecError("INVALID_INPUT", `a valid --thread-id is required\n${AGENT_CLI_USAGE}`), 2);
  }
  const wellFormed =
    (command === SESSION_TOOL_SERVER_COMMAND && toolName === undefined) ||
    (command === "tool-spec" && toolName !== undefined && argsJson === undefined) ||
    (command === "tool-call" && toolName !== undefined && extra.length === 0);
  if (!wellFormed) return fail(new PedelecError("INVALID_INPUT", AGENT_CLI_USAGE), 2);
  const capability = io.env[THREAD_CAPABILITY_ENV];
  if (!isThreadCapability(capability)) {
    return fail(
      new PedelecError("THREAD_ACCESS_DENIED", `${THREAD_CAPABILITY_ENV} is not set: pedelec-cli works only inside a Pedelec agent turn`),
      1,
    );
  }
  if (command === SESSION_TOOL_SERVER_COMMAND || toolName === undefined) {
    if (io.stdio === undefined) return fail(new PedelecError("INVALID_INPUT", "mcp needs standard input and output"), 2);
    // The MCP library loads only here: tool-call, the command agents without MCP run for every call, never loads it.
    const { serveSessionMcp } = await import("./mcp-command.js");
    return serveSessionMcp({ env: io.env, threadId, capability, ...io.stdio });
  }
  let argsText = argsJson ?? "{}";
  if (argsText === "-") {
    try {
      argsText = await io.readStdin();
    } catch (error) {
      return fail(new PedelecError("INVALID_INPUT", `could not read the arguments from stdin: ${(error as Error).message}`), 1);
    }
  }

  const { socketPath } = locateCore(io.env);
  try {
    if (command === "tool-spec") {
      const { checkToolSpecResult } = await import("./tool-spec-result.js");
      const spec = await callCore(socketPath, { type: "toolSpec", payload: { threadId, capability, toolName }, check: checkToolSpecResult });
      io.out(`${JSON.stringify(spec, null, 2)}\n`);
    } else {
      const { result } = await callCore(socketPath, {
        type: "toolCall",
        payload: { threadId, capability, toolName, argsJson: argsText },
        check: checkToolCallResult,
      });
      io.out(`${JSON.stringify(result)}\n`);
    }
    return 0;
  } catch (error) {
    return fail(PedelecError.from(error, "SESSION_ERROR"), 1);
  }
}
