import { constants as fsConstants } from "node:fs";
import { access, stat } from "node:fs/promises";
import { homedir } from "node:os";
import path from "node:path";
import type { ProviderAdapter, ProviderDiscovery } from "./provider-adapter.js";
import { runProviderProcess } from "./provider-process.js";
import { resolveCorePaths } from "../core-paths.js";

export const VERSION_PROBE_TIMEOUT_MS = 5_000;

/** Where CLIs land when the installer's PATH edits have not reached the daemon's environment. */
const FALLBACK_DIRECTORIES = ["~/.local/bin", "/usr/local/bin", "/opt/homebrew/bin"];

/**
 * The directories searched for provider CLIs, in order: `PEDELEC_PROVIDER_PATH` (so tests and users can
 * point at a specific build), then `PATH`, then common install folders. Relative entries are dropped:
 * they would depend on whatever the daemon's working directory happens to be.
 */
export function providerSearchPath(env: Record<string, string | undefined>, withFallbacks = true): string[] {
  const home = env.HOME || homedir();
  const candidates = [
    ...splitPathList(env.PEDELEC_PROVIDER_PATH),
    ...splitPathList(env.PATH),
    ...(withFallbacks ? FALLBACK_DIRECTORIES : []).map((directory) => (directory.startsWith("~/") ? path.join(home, directory.slice(2)) : directory)),
  ];
  const seen = new Set<string>();
  const directories: string[] = [];
  for (const candidate of candidates) {
    if (!path.isAbsolute(candidate)) continue;
    const normalized = path.resolve(candidate);
    if (seen.has(normalized)) continue;
    seen.add(normalized);
    directories.push(normalized);
  }
  return directories;
}

function splitPathList(value: string | undefined): string[] {
  if (!value) return [];
  return value.split(path.delimiter).filter((entry) => entry.length > 0);
}

/**
 * The first `<dir>/<programName>` that is an executable regular file (symlinks followed).
 * The returned path keeps the symlink, so the CLI sees the name it was installed under.
 */
export async function findExecutable(programName: string, searchDirs: readonly string[]): Promise<string | null> {
  // A name with a separator would escape the search directories.
  if (programName.length === 0 || programName.includes("/") || programName.includes("\\")) return null;
  for (const directory of searchDirs) {
    const candidate = path.join(directory, programName);
    if (await isExecutableFile(candidate)) return candidate;
  }
  return null;
}

async function isExecutableFile(candidate: string): Promise<boolean> {
  try {
    const info = await stat(candidate);
    if (!info.isFile()) return false;
    await access(candidate, fsConstants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Spawn failures that mean "the machine is busy", not "the executable is broken". */
const TRANSIENT_SPAWN_ERRORS = new Set(["EAGAIN", "EMFILE", "ENFILE", "ENOMEM"]);

/** A dotted version number such as `2.1.332` or `0.61`. */
const VERSION_PATTERN = /\b(\d+\.\d+(?:\.\d+)*)\b/;

/**
 * Runs `<bin> --version` (5 s limit). Available only when it exits 0 and prints a dotted version number.
 * A probe that could not finish (timeout, cancellation, no process slot) is marked `transient`.
 * `env` defaults to Core's own environment.
 */
export async function probeVersion(
  executablePath: string,
  signal: AbortSignal,
  env: Record<string, string> = inheritedEnvironment(),
  timeoutMs = VERSION_PROBE_TIMEOUT_MS,
): Promise<ProviderDiscovery> {
  const name = path.basename(executablePath);
  const unavailable = (error: string): ProviderDiscovery => ({ available: false, executablePath, version: null, error });
  const inconclusive = (error: string): ProviderDiscovery => ({ ...unavailable(error), transient: true });
  const timeout = AbortSignal.timeout(timeoutMs);
  const stdoutLines: string[] = [];
  const run = await runProviderProcess({
    executablePath,
    args: ["--version"],
    cwd: path.dirname(executablePath),
    env,
    stdin: "",
    signal: AbortSignal.any([signal, timeout]),
    onStdoutLine: (line) => {
      if (stdoutLines.length < 20) stdoutLines.push(line);
    },
    maxStderrBytes: 8 * 1024,
    killGraceMs: 500,
  });
  if (signal.aborted) return inconclusive(`${name} --version was cancelled`);
  if (timeout.aborted) return inconclusive(`${name} --version failed: no answer within ${timeoutMs / 1000} s`);
  if (run.spawnError) {
    const error = `${name} --version failed: ${run.spawnError.message}`;
    return TRANSIENT_SPAWN_ERRORS.has(run.spawnError.code) ? inconclusive(error) : unavailable(error);
  }
  if (run.exitCode !== 0) {
    const reason = firstLine(run.stderr) || firstLine(stdoutLines.join("\n"));
    const status = run.exitCode === null ? `killed by ${run.signal ?? "a signal"}` : `exit code ${run.exitCode}`;
    return unavailable(`${name} --version failed: ${status}${reason ? `: ${reason}` : ""}`);
  }
  const version = VERSION_PATTERN.exec(`${stdoutLines.join("\n")}\n${run.stderr}`)?.[1];
  if (!version) return unavailable(`${name} --version failed: no version number in its output`);
  return { available: true, executablePath, version, error: null };
}

function firstLine(text: string): string {
  return text.trim().split("\n")[0]?.trim() ?? "";
}

function inheritedEnvironment(): Record<string, string> {
  return definedOnly(process.env);
}

function definedOnly(source: Record<string, string | undefined>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(source)) if (value !== undefined) env[key] = value;
  return env;
}

/** What discovery reports when no executable was found. */
export function notInstalledDiscovery(programName: string): ProviderDiscovery {
  return {
    available: false,
    executablePath: null,
    version: null,
    error: `${programName} is not installed or not on PATH`,
  };
}

/** Probes an executable that was found: the adapter's own probe, or one that may answer from a cache first. */
export type ExecutableProbe = (
  adapter: ProviderAdapter,
  executablePath: string,
  signal: AbortSignal,
  env: Record<string, string>,
) => Promise<ProviderDiscovery>;

const adapterProbe: ExecutableProbe = (adapter, executablePath, signal, env) => adapter.discover(executablePath, signal, env);

/**
 * Finds the adapter's executable and lets the adapter probe it (through `probe` when given). Order:
 * `PEDELEC_PROVIDER_PATH` (an override), then `configuredPath` (settings `providers.<code>.path`, recorded by `pedelec
 * install`), then the rest of the search path; without `searchInstallFolders`, the usual install folders at its end are
 * left out.
 */
export async function discoverProvider(
  adapter: ProviderAdapter,
  env: Record<string, string | undefined>,
  signal: AbortSignal,
  configuredPath?: string,
  { searchInstallFolders = true, probe = adapterProbe }: { searchInstallFolders?: boolean; probe?: ExecutableProbe } = {},
): Promise<ProviderDiscovery> {
  if (adapter.bundled) {
    const binDir = resolveCorePaths(env).binDir;
    const installed = path.join(binDir, adapter.programName);
    if (!(await isExecutableFile(installed))) {
      return {
        available: false,
        executablePath: null,
        version: null,
        error: `${adapter.programName} is not installed in ${binDir}; run \`pedelec install\``,
      };
    }
    return probe(adapter, installed, signal, definedOnly(env));
  }
  let executablePath = await findExecutable(adapter.programName, providerSearchPath({ PEDELEC_PROVIDER_PATH: env.PEDELEC_PROVIDER_PATH }, false));
  if (executablePath === null && configuredPath !== undefined) {
    if (!(await isExecutableFile(configuredPath))) {
      return {
        available: false,
        executablePath: null,
        version: null,
        error: `${adapter.programName} is configured at ${configuredPath} (settings providers.${adapter.code}.path), but that is not an executable file`,
      };
    }
    executablePath = configuredPath;
  }
  executablePath ??= await findExecutable(adapter.programName, providerSearchPath(env, searchInstallFolders));
  if (executablePath === null) return notInstalledDiscovery(adapter.programName);
  return probe(adapter, executablePath, signal, definedOnly(env));
}

/**
 * After a successful version probe, asks the CLI whether it is signed in (`args`, e.g. `login status`) and turns a
 * clear "no" into an unavailable discovery naming the command that fixes it. An answer that is not clear (a crash, a
 * timeout, wording we do not know) leaves the provider available: the turn itself still reports a sign-in problem.
 */
export async function probeSignIn(
  discovery: ProviderDiscovery,
  args: readonly string[],
  signedOut: (output: string, exitCode: number | null) => boolean,
  fixCommand: string,
  signal: AbortSignal,
  env: Record<string, string>,
): Promise<ProviderDiscovery> {
  if (!discovery.available || discovery.executablePath === null) return discovery;
  const lines: string[] = [];
  const run = await runProviderProcess({
    executablePath: discovery.executablePath,
    args,
    cwd: path.dirname(discovery.executablePath),
    env,
    stdin: "",
    signal: AbortSignal.any([signal, AbortSignal.timeout(VERSION_PROBE_TIMEOUT_MS)]),
    onStdoutLine: (line) => {
      if (lines.length < 20) lines.push(line);
    },
    maxStderrBytes: 8 * 1024,
    killGraceMs: 500,
  });
  if (run.spawnError || !signedOut(`${lines.join("\n")}\n${run.stderr}`, run.exitCode)) return discovery;
  const name = path.basename(discovery.executablePath);
  return { ...discovery, available: false, error: `${name} is installed at ${discovery.executablePath} but not signed in: run \`${fixCommand}\`` };
}
