import { parseArgs, type ParseArgsConfig } from "node:util";
import { constants } from "node:os";
import { CoreConnection } from "@pedelec/core-client/core-client";
import { locateCore } from "@pedelec/core-client/core-location";
import { CORE_VERSION } from "@pedelec/core-client/core-version";
import { sessionIdSchema } from "@pedelec/protocol/domain";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { THREAD_CAPABILITY_ENV, threadCapabilitySchema, type RequestPayload, type RequestResult } from "@pedelec/protocol/requests";
import { RUNTIME_REFUSAL_EXIT_CODE, RUNTIME_TIMEOUT_EXIT_CODE } from "@pedelec/protocol/script-run";

export const TS_RUNTIME_USAGE = `Usage:
  pedelec-ts-runtime --thread-id <id> run [--timeout-ms <ms>] [--import-map <path>] <workspace-relative-path> [-- args…]
  pedelec-ts-runtime --thread-id <id> run [--timeout-ms <ms>] [--import-map <path>] - [-- args…]   (source from stdin)
Runs JavaScript or TypeScript in the session's workspace with Pedelec's pinned, sandboxed Deno. Arguments after --
reach the script as Deno.args and never change its permissions. The thread id defaults to $PEDELEC_THREAD_ID; the
thread's capability is read from $${THREAD_CAPABILITY_ENV}. Exit code: the script's own; 124 on timeout; 125 when
Pedelec refused or stopped the run (the last stderr line is {"error":{"code","message"}}). --help and --version
answer outside a turn too.`;

export interface TsRuntimeIo {
  stdout: (chunk: Buffer | string) => void;
  stderr: (chunk: Buffer | string) => void;
  env: NodeJS.ProcessEnv;
  /** The script source, when the entry is `-`. */
  readStdin: () => Promise<string>;
}

type RunOutcome = RequestResult<"runScript">;

/** `pedelec-ts-runtime`: the agent's one way to run JS/TS. The script's output and exit code pass through. */
export async function runTsRuntime(argv: readonly string[], io: TsRuntimeIo): Promise<number> {
  const refuse = (error: PedelecError, exitCode = RUNTIME_REFUSAL_EXIT_CODE): number => {
    io.stderr(`${JSON.stringify({ error: { code: error.code, message: error.message } })}\n`);
    return exitCode;
  };
  // Only before `--`: what follows belongs to the script.
  const own = argv.includes("--") ? argv.slice(0, argv.indexOf("--")) : argv;
  if (own.includes("--help") || own.includes("-h")) {
    io.stdout(`${TS_RUNTIME_USAGE}\n`);
    return 0;
  }
  if (own.includes("--version")) {
    io.stdout(`pedelec-ts-runtime ${CORE_VERSION}\n`);
    return 0;
  }
  const parsed = parseCommandLine(argv, io.env);
  if (parsed instanceof PedelecError) return refuse(parsed);
  const capability = io.env[THREAD_CAPABILITY_ENV];
  if (capability === undefined || !threadCapabilitySchema.safeParse(capability).success) {
    return refuse(
      new PedelecError("THREAD_ACCESS_DENIED", `${THREAD_CAPABILITY_ENV} is not set: pedelec-ts-runtime works only inside a Pedelec agent turn`),
    );
  }
  const payload: RequestPayload<"runScript"> = { threadId: parsed.threadId, capability, args: parsed.args };
  if (parsed.timeoutMs !== undefined) payload.timeoutMs = parsed.timeoutMs;
  if (parsed.importMap !== undefined) payload.importMap = parsed.importMap;
  if (parsed.entry === "-") {
    try {
      payload.source = await io.readStdin();
    } catch (error) {
      return refuse(new PedelecError("DENO_ENTRY_INVALID", `could not read the script from stdin: ${(error as Error).message}`));
    }
    if (payload.source.length === 0) return refuse(new PedelecError("DENO_ENTRY_INVALID", "the script on stdin is empty"));
  } else {
    payload.entry = parsed.entry;
  }

  let connection: CoreConnection;
  try {
    connection = await CoreConnection.open(locateCore(io.env).socketPath);
  } catch (error) {
    return refuse(PedelecError.from(error, "IPC_UNAVAILABLE"));
  }
  // One request per connection, so every run-output frame on it is this run's.
  connection.onFrame((frame) => {
    if (frame.kind === "run-output") (frame.stream === "stdout" ? io.stdout : io.stderr)(Buffer.from(frame.data, "base64"));
  });
  try {
    return exitCodeOf(await connection.request("runScript", payload), io, refuse);
  } catch (error) {
    return refuse(PedelecError.from(error, "SESSION_ERROR"));
  } finally {
    connection.close();
  }
}

function exitCodeOf(outcome: RunOutcome, io: TsRuntimeIo, refuse: (error: PedelecError, exitCode?: number) => number): number {
  for (const [stream, truncated] of [
    ["stdout", outcome.stdoutTruncated],
    ["stderr", outcome.stderrTruncated],
  ] as const) {
    if (truncated) io.stderr(`pedelec-ts-runtime: the script's ${stream} was cut at the output limit\n`);
  }
  if (outcome.processTreeCleanupError) io.stderr(`pedelec-ts-runtime: ${outcome.processTreeCleanupError}\n`);
  if (outcome.captureError) io.stderr(`pedelec-ts-runtime: ${outcome.captureError}\n`);
  switch (outcome.termination) {
    case "timeout":
      return refuse(
        new PedelecError("DENO_TIMEOUT", `the script ran longer than its time limit and was stopped after ${Math.round(outcome.durationMs)} ms`),
        RUNTIME_TIMEOUT_EXIT_CODE,
      );
    case "cancelled":
      return refuse(new PedelecError("DENO_CANCELLED", "the run was cancelled"));
    case "memory-limit":
      return refuse(new PedelecError("DENO_MEMORY_LIMIT", "the script used more memory than a run may use and was stopped"));
    case "exited":
      if (outcome.exitCode !== null) return outcome.exitCode;
      // Killed by a signal of its own making (V8 aborts on heap exhaustion): the shell's 128 + signal number.
      return 128 + (outcome.signal ? (constants.signals[outcome.signal as NodeJS.Signals] ?? 0) : 0);
  }
}

/** The flags `run` takes before its words. */
const TS_RUNTIME_FLAGS = {
  "thread-id": { type: "string" },
  "timeout-ms": { type: "string" },
  "import-map": { type: "string" },
} as const satisfies NonNullable<ParseArgsConfig["options"]>;

interface CommandLine {
  threadId: string;
  entry: string;
  args: string[];
  timeoutMs?: number;
  importMap?: string;
}

function parseCommandLine(argv: readonly string[], env: NodeJS.ProcessEnv): CommandLine | PedelecError {
  const separator = argv.indexOf("--");
  const own = separator === -1 ? [...argv] : argv.slice(0, separator);
  const args = separator === -1 ? [] : argv.slice(separator + 1);
  let parsed: ReturnType<typeof parseArgs<{ args: string[]; options: typeof TS_RUNTIME_FLAGS; allowPositionals: true; strict: true }>>;
  try {
    parsed = parseArgs({ args: own, options: TS_RUNTIME_FLAGS, allowPositionals: true, strict: true });
  } catch (error) {
    return new PedelecError("INVALID_INPUT", `${(error as Error).message}\n${TS_RUNTIME_USAGE}`);
  }
  const threadId = parsed.values["thread-id"] ?? env.PEDELEC_THREAD_ID;
  if (threadId === undefined || !sessionIdSchema.safeParse(threadId).success) {
    return new PedelecError("INVALID_INPUT", `a valid --thread-id is required\n${TS_RUNTIME_USAGE}`);
  }
  const [command, entry, ...extra] = parsed.positionals;
  if (command !== "run" || entry === undefined || extra.length > 0) {
    return new PedelecError("INVALID_INPUT", `expected \`run <path | -> [-- args…]\`\n${TS_RUNTIME_USAGE}`);
  }
  const line: CommandLine = { threadId, entry, args };
  const timeout = parsed.values["timeout-ms"];
  if (timeout !== undefined) {
    if (!/^[1-9][0-9]{0,8}$/.test(timeout)) return new PedelecError("INVALID_INPUT", `--timeout-ms must be a positive whole number of milliseconds`);
    line.timeoutMs = Number(timeout);
  }
  if (parsed.values["import-map"] !== undefined) line.importMap = parsed.values["import-map"];
  return line;
}
