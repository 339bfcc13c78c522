import { parseArgs } from "node:util";
import { CoreConnection } from "@pedelec/core/core-client";
import { resolveCorePaths } from "@pedelec/core/core-paths";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { sessionIdSchema } from "@pedelec/protocol/domain";
import { THREAD_CAPABILITY_ENV, threadCapabilitySchema } from "@pedelec/protocol/requests";

const USAGE = `Usage:
  pedelec-cli --thread-id <id> tool-spec <tool-name>
  pedelec-cli --thread-id <id> tool-call <tool-name> '<json_args>'
  pedelec-cli --thread-id <id> tool-call <tool-name> -     (arguments read from stdin)
The thread id defaults to $PEDELEC_THREAD_ID; the thread's capability is read from $${THREAD_CAPABILITY_ENV}.`;

export interface AgentCliIo {
  out: (text: string) => void;
  err: (text: string) => void;
  env: NodeJS.ProcessEnv;
  /** All of standard input, read when the arguments are given as `-` (argv cannot carry more than about 128 KiB). */
  readStdin: () => Promise<string>;
}

/**
 * The agent-facing command. Results go to stdout as JSON (exit 0); failures print {"error":{code,message}} on stdout,
 * where agents read, and exit 1 (2 for usage errors).
 */
export async function runAgentCli(argv: readonly string[], io: AgentCliIo): Promise<number> {
  const fail = (error: PedelecError, exitCode: number): number => {
    io.out(`${JSON.stringify({ error: { code: error.code, message: error.message } })}\n`);
    return exitCode;
  };
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], options: { "thread-id": { type: "string" } }, allowPositionals: true, strict: true });
  } catch (error) {
    return fail(new PedelecError("INVALID_INPUT", `${(error as Error).message}\n${USAGE}`), 2);
  }
  const threadId = parsed.values["thread-id"] ?? io.env.PEDELEC_THREAD_ID;
  const [command, toolName, argsJson, ...extra] = parsed.positionals;
  if (threadId === undefined || !sessionIdSchema.safeParse(threadId).success) {
    return fail(new PedelecError("INVALID_INPUT", `a valid --thread-id is required\n${USAGE}`), 2);
  }
  const wellFormed =
    (command === "tool-spec" && toolName !== undefined && argsJson === undefined) ||
    (command === "tool-call" && toolName !== undefined && extra.length === 0);
  if (!wellFormed || toolName === undefined) return fail(new PedelecError("INVALID_INPUT", USAGE), 2);
  const capability = io.env[THREAD_CAPABILITY_ENV];
  if (capability === undefined || !threadCapabilitySchema.safeParse(capability).success) {
    return fail(
      new PedelecError("THREAD_ACCESS_DENIED", `${THREAD_CAPABILITY_ENV} is not set: pedelec-cli works only inside a Pedelec agent turn`),
      1,
    );
  }
  let argsText = argsJson ?? "{}";
  if (argsText === "-") {
    try {
      argsText = await io.readStdin();
    } catch (error) {
      return fail(new PedelecError("INVALID_INPUT", `could not read the arguments from stdin: ${(error as Error).message}`), 1);
    }
  }

  const paths = resolveCorePaths(io.env);
  let connection: CoreConnection;
  try {
    connection = await CoreConnection.open(paths.socketPath);
  } catch (error) {
    return fail(PedelecError.from(error, "IPC_UNAVAILABLE"), 1);
  }
  try {
    if (command === "tool-spec") {
      const spec = await connection.request("toolSpec", { threadId, capability, toolName });
      io.out(`${JSON.stringify(spec, null, 2)}\n`);
    } else {
      const { result } = await connection.request("toolCall", { threadId, capability, toolName, argsJson: argsText });
      io.out(`${JSON.stringify(result)}\n`);
    }
    return 0;
  } catch (error) {
    return fail(PedelecError.from(error, "SESSION_ERROR"), 1);
  } finally {
    connection.close();
  }
}
