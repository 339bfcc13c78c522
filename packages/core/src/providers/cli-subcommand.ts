import { VERSION_PROBE_TIMEOUT_MS } from "./provider-discovery.js";
import { runProviderProcess } from "./provider-process.js";

/** What a short CLI subcommand printed, and how it exited. */
export interface CliSubcommandResult {
  stdout: string;
  stderr: string;
  exitCode: number | null;
  /** Set when codex could not be started (ENOENT, EACCES, …); the output is empty then. */
  spawnError: { code: string; message: string } | null;
}

/**
 * The CLIs' reports (codex `doctor --json` and `mcp list --json`, opencode `models <provider> --verbose`) are at most
 * some thousand lines of JSON; anything far larger is not one.
 */
const MAX_REPORT_BYTES = 1024 * 1024;

/**
 * Runs a short CLI subcommand in `cwd` (5 s limit unless `timeoutMs` says otherwise, its stdout capped at 1 MiB); null
 * when it was aborted, timed out or printed more than that.
 */
export async function runCliSubcommand(
  executablePath: string,
  args: readonly string[],
  cwd: string,
  signal: AbortSignal,
  env: Record<string, string>,
  timeoutMs = VERSION_PROBE_TIMEOUT_MS,
): Promise<CliSubcommandResult | null> {
  const lines: string[] = [];
  let bytes = 0;
  const timeout = AbortSignal.timeout(timeoutMs);
  const run = await runProviderProcess({
    executablePath,
    args,
    cwd,
    env,
    stdin: "",
    signal: AbortSignal.any([signal, timeout]),
    onStdoutLine: (line) => {
      bytes += Buffer.byteLength(line) + 1;
      if (bytes <= MAX_REPORT_BYTES) lines.push(line);
    },
    maxStderrBytes: 8 * 1024,
    killGraceMs: 500,
  });
  if (signal.aborted || timeout.aborted || bytes > MAX_REPORT_BYTES) return null;
  return { stdout: lines.join("\n"), stderr: run.stderr, exitCode: run.exitCode, spawnError: run.spawnError };
}
