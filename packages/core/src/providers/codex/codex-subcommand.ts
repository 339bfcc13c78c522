import { VERSION_PROBE_TIMEOUT_MS } from "../provider-discovery.js";
import { runProviderProcess } from "../provider-process.js";

/** What a short codex subcommand printed, and how it exited. */
export interface CodexSubcommandResult {
  stdout: string;
  stderr: string;
  exitCode: number | null;
  /** Set when codex could not be started (ENOENT, EACCES, …); the output is empty then. */
  spawnError: { code: string; message: string } | null;
}

/** codex's reports (`doctor --json`, `mcp list --json`) are at most a few hundred lines of JSON; anything far larger is not one. */
const MAX_REPORT_BYTES = 1024 * 1024;

/**
 * Runs a short codex subcommand in `cwd` (5 s limit, its stdout capped at 1 MiB); null when it was aborted, timed out
 * or printed more than that.
 */
export async function runCodexSubcommand(
  executablePath: string,
  args: readonly string[],
  cwd: string,
  signal: AbortSignal,
  env: Record<string, string>,
): Promise<CodexSubcommandResult | null> {
  const lines: string[] = [];
  let bytes = 0;
  const timeout = AbortSignal.timeout(VERSION_PROBE_TIMEOUT_MS);
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
