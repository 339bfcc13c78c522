import { type ChildProcessByStdio, spawn } from "node:child_process";
import { constants } from "node:fs";
import { access, chmod, mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { isAbsolute, join, relative } from "node:path";
import type { Readable } from "node:stream";
import { pathToFileURL } from "node:url";
import type { AccessMode } from "@pedelec/protocol/domain";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import {
  DEFAULT_RUN_TIMEOUT_MS,
  MAX_RUN_ARG_LENGTH,
  MAX_RUN_ARGS,
  MAX_SCRIPT_SOURCE_LENGTH,
  RUN_OUTPUT_CAP_BYTES,
  type RunTermination,
  runIdSchema,
  type ScriptRunResult,
} from "@pedelec/protocol/script-run";
import { DescendantTracker } from "./descendant-tracker.js";
import { bubblewrapArgs, fullAccessDenoRunArgs } from "./deno-command.js";
import { resolveImportMap, type ResolvedImportMap, withWorkspaceModule } from "./import-map.js";
import { ModuleGraphChecker } from "./module-graph-check.js";
import { OutputCapture } from "./output-capture.js";
import { groupResidentKib, killGroup } from "./process-table.js";
import { writeRunLog } from "./run-log.js";
import type { SandboxWall } from "./sandbox-wall.js";
import { sharedLibrariesOf } from "./shared-libraries.js";
import { ensureRuntimeFolders } from "./runtime-folders.js";
import { openRuntimeMounts, type RuntimeMounts } from "./runtime-mounts.js";
import { resolveWorkspaceFile, resolveWorkspaceRoot } from "./workspace-paths.js";

export interface ScriptRunnerOptions {
  /** The pinned Deno binary (see `locateDeno`). */
  denoPath: string;
  /** The OS wall; sandbox runs are refused when it is `none`. */
  wall: SandboxWall;
  /** Core-owned private folder (created 0700 if missing) for per-run files: merged import map, the generated
   *  `pedelec:workspace` module, Deno's cache for the pre-check. Never inside a workspace. */
  privateDir: string;
  /** Environment for Full Access runs (Core's own environment). */
  hostEnv: NodeJS.ProcessEnv;
  limits?: Partial<RunLimits>;
  /**
   * Told of each run's process group while it exists, so that something outliving this process (Core's watchdog) can
   * kill a Full Access run whose owner crashed.
   */
  processGroups?: {
    record(pgid: number): Promise<void>;
    forget(pgid: number): Promise<void>;
  };
}

export interface RunLimits {
  /** V8 old-space limit of a sandboxed run. */
  heapMiB: number;
  /** Resident memory of a sandboxed run's whole process group before it is killed. */
  rssMiB: number;
  /** Bytes kept per stream (stdout, stderr). */
  outputBytes: number;
  /** How often memory (sandbox) or descendants (Full Access) are looked at. */
  pollMs: number;
}

const DEFAULT_LIMITS: RunLimits = { heapMiB: 512, rssMiB: 1024, outputBytes: RUN_OUTPUT_CAP_BYTES, pollMs: 100 };
/** How long output pipes may stay open after the run's processes are gone (held by an escaped process). */
const STREAM_CLOSE_GRACE_MS = 2_000;

export interface ScriptRunRequest {
  /** `[A-Za-z0-9_-]{1,128}`, unique among this runner's runs in progress. */
  runId: string;
  threadId: string;
  /** The session workspace (absolute). The runner uses its real path everywhere. */
  workspaceRoot: string;
  access: AccessMode;
  /** Workspace-relative entry; exactly one of entry and source. */
  entry?: string;
  /** Script text, written to `<ws>/.pedelec-stdin-<runId>.ts` so relative imports resolve from the workspace root;
   *  checked like any entry and removed after the run. */
  source?: string;
  /** What the caller put after `--`; a literal leading "--" is dropped; only ever reaches `Deno.args`. */
  args?: readonly string[];
  /** Workspace-relative import map. */
  importMap?: string;
  /** Default DEFAULT_RUN_TIMEOUT_MS. */
  timeoutMs?: number;
  /** Abort → SIGKILL the run's group, termination "cancelled"; `signal.reason` goes into the run log. */
  signal?: AbortSignal;
  /** Output bytes as they arrive, only those within the cap. */
  onOutput?: (stream: "stdout" | "stderr", chunk: Buffer) => void;
}

/** What a run needs once everything is checked. */
interface PreparedRun {
  realWorkspace: string;
  runtimeFolder: string;
  entryPath: string;
  importMapPath: string;
  runFolder: string;
  args: string[];
  tmpDir: string;
}

/**
 * Runs JavaScript/TypeScript with the pinned Deno, each run in its own process group. Sandbox runs (the default) are
 * confined twice: Deno's permissions (read/write the workspace only, nothing else) and a bubblewrap namespace in
 * which only the workspace exists; their static module graph is checked before they start, because Deno loads
 * imported modules without asking its read permission. Full Access runs get every permission and the host
 * environment, but keep the entry rules, the import-map structure, the timeout, the output caps and the cleanup.
 */
export class ScriptRunner {
  readonly #options: ScriptRunnerOptions;
  readonly #limits: RunLimits;
  readonly #graphChecker = new ModuleGraphChecker();
  readonly #runIds = new Set<string>();

  constructor(options: ScriptRunnerOptions) {
    if (!isAbsolute(options.privateDir)) throw new PedelecError("INVALID_INPUT", "the runner's private folder must be an absolute path");
    this.#options = options;
    this.#limits = { ...DEFAULT_LIMITS, ...options.limits };
  }

  /** Runs going on now (Core aborts their signals on shutdown and revocation). */
  get activeRuns(): number {
    return this.#runIds.size;
  }

  /**
   * Refusals before anything runs throw PedelecError (DENO_ENTRY_INVALID, DENO_IMPORT_MAP_INVALID, DENO_UNAVAILABLE,
   * WORKSPACE_PATH_INVALID, INVALID_INPUT, DENO_CANCELLED when the signal is already aborted). Everything after the
   * spawn resolves with a ScriptRunResult.
   */
  async run(request: ScriptRunRequest): Promise<ScriptRunResult> {
    if (!runIdSchema.safeParse(request.runId).success) throw new PedelecError("INVALID_INPUT", `invalid run id ${JSON.stringify(request.runId)}`);
    if (this.#runIds.has(request.runId)) throw new PedelecError("INVALID_INPUT", `a run with id ${request.runId} is already going on`);
    this.#runIds.add(request.runId);
    try {
      return await this.#run(request);
    } finally {
      this.#runIds.delete(request.runId);
    }
  }

  async #run(request: ScriptRunRequest): Promise<ScriptRunResult> {
    throwIfCancelled(request.signal);
    checkRequestShape(request);
    const access = request.access;
    if (access === "sandbox" && this.#options.wall.kind === "none") {
      throw new PedelecError("DENO_UNAVAILABLE", `sandboxed runs need an OS sandbox: ${this.#options.wall.reason}`);
    }
    await ensureExecutable(this.#options.denoPath);
    const realWorkspace = await resolveWorkspaceRoot(request.workspaceRoot);
    const runtimeFolder = await ensureRuntimeFolders(realWorkspace);
    const runFolder = await this.#createRunFolder(request.runId);
    const stdinPath = request.source === undefined ? undefined : join(realWorkspace, `.pedelec-stdin-${request.runId}.ts`);
    const cleanupErrors: string[] = [];
    const startedAt = new Date();
    let result: ScriptRunResult | undefined;
    let refusal: PedelecError | undefined;
    let cancelReason: string | undefined;
    let wroteStdin = false;
    try {
      if (stdinPath !== undefined) {
        // "wx" never follows or replaces what is already there (a symlink placed at that name, say).
        await writeFile(stdinPath, request.source as string, { flag: "wx", mode: 0o600 });
        wroteStdin = true;
      }
      const prepared = await this.#prepare(request, realWorkspace, runtimeFolder, runFolder, stdinPath);
      throwIfCancelled(request.signal);
      const outcome = await this.#execute(request, prepared);
      result = outcome.result;
      cancelReason = outcome.cancelReason;
      return result;
    } catch (error) {
      refusal = PedelecError.from(error, "DENO_ENTRY_INVALID");
      throw refusal;
    } finally {
      await Promise.all([
        rm(runFolder, { recursive: true, force: true }).catch((error: Error) => cleanupErrors.push(`private run folder: ${error.message}`)),
        stdinPath !== undefined && wroteStdin
          ? rm(stdinPath, { force: true }).catch((error: Error) => cleanupErrors.push(`stdin file: ${error.message}`))
          : undefined,
      ]);
      await writeRunLog(runtimeFolder, startedAt, {
        runId: request.runId,
        threadId: request.threadId,
        access,
        entry: request.entry ?? "stdin",
        argsCount: request.args?.length ?? 0,
        result,
        refusal,
        cancelReason,
        cleanupErrors,
      }).catch(() => undefined);
    }
  }

  async #createRunFolder(runId: string): Promise<string> {
    const runs = join(this.#options.privateDir, "runs");
    await mkdir(runs, { recursive: true, mode: 0o700 });
    await chmod(this.#options.privateDir, 0o700);
    const runFolder = join(runs, runId);
    try {
      await mkdir(runFolder, { mode: 0o700 });
    } catch (error) {
      throw new PedelecError("INVALID_INPUT", `could not create the private folder of run ${runId}: ${(error as Error).message}`);
    }
    return runFolder;
  }

  async #prepare(
    request: ScriptRunRequest,
    realWorkspace: string,
    runtimeFolder: string,
    runFolder: string,
    stdinPath: string | undefined,
  ): Promise<PreparedRun> {
    const entryName = stdinPath === undefined ? (request.entry as string) : relative(realWorkspace, stdinPath);
    const entryPath = await resolveWorkspaceFile(realWorkspace, entryName, "entry", "DENO_ENTRY_INVALID");
    let userMap: ResolvedImportMap = { imports: {}, scopes: {} };
    if (request.importMap !== undefined) {
      const mapPath = await resolveWorkspaceFile(realWorkspace, request.importMap, "import map", "DENO_IMPORT_MAP_INVALID");
      const text = await readFile(mapPath, "utf8");
      userMap = resolveImportMap({ text, mapPath, realWorkspace, access: request.access });
    }
    const assetsDir = join(runtimeFolder, "assets");
    const tmpDir = join(runtimeFolder, "tmp");
    const workspaceModulePath = join(runFolder, "pedelec-workspace.js");
    await writeFile(
      workspaceModulePath,
      [
        `export const workspaceRoot = ${JSON.stringify(realWorkspace)};`,
        `export const assetsDir = ${JSON.stringify(assetsDir)};`,
        `export const tmpDir = ${JSON.stringify(tmpDir)};`,
        `export const threadId = ${JSON.stringify(request.threadId)};`,
        "",
      ].join("\n"),
      { mode: 0o600 },
    );
    const importMapPath = join(runFolder, "import-map.json");
    await writeFile(importMapPath, JSON.stringify(withWorkspaceModule(userMap, pathToFileURL(workspaceModulePath).href)), { mode: 0o600 });
    if (request.access === "sandbox") {
      await this.#graphChecker.check({
        denoPath: this.#options.denoPath,
        denoDir: join(this.#options.privateDir, "deno-dir"),
        realWorkspace,
        entryPath,
        importMapPath,
        workspaceModulePath,
        importMapKey: JSON.stringify(userMap),
        ...(request.signal === undefined ? {} : { signal: request.signal }),
      });
    }
    const args = [...(request.args ?? [])];
    if (args[0] === "--") args.shift();
    return { realWorkspace, runtimeFolder, entryPath, importMapPath, runFolder, args, tmpDir };
  }

  async #execute(request: ScriptRunRequest, prepared: PreparedRun): Promise<{ result: ScriptRunResult; cancelReason?: string }> {
    const limits = this.#limits;
    const sandboxed = request.access === "sandbox";
    const wall = this.#options.wall;
    let command: string;
    let args: string[];
    let mounts: RuntimeMounts | undefined;
    if (sandboxed) {
      if (wall.kind !== "bubblewrap") throw new PedelecError("DENO_UNAVAILABLE", "sandboxed runs need an OS sandbox");
      command = wall.executable;
      args = bubblewrapArgs({
        bubblewrap: wall.executable,
        denoPath: this.#options.denoPath,
        libraries: await sharedLibrariesOf(this.#options.denoPath),
        runFolder: prepared.runFolder,
        tmpDir: prepared.tmpDir,
        runtimeFolder: prepared.runtimeFolder,
        realWorkspace: prepared.realWorkspace,
        importMapPath: prepared.importMapPath,
        entryPath: prepared.entryPath,
        args: prepared.args,
        heapMiB: limits.heapMiB,
      });
    } else {
      command = this.#options.denoPath;
      args = fullAccessDenoRunArgs({ importMapPath: prepared.importMapPath, entryPath: prepared.entryPath, args: prepared.args });
    }
    throwIfCancelled(request.signal);
    if (sandboxed) mounts = await openRuntimeMounts(prepared.runtimeFolder);

    const started = performance.now();
    // detached: the run is the leader of its own process group (and session), so one kill reaches all of it.
    let child: ChildProcessByStdio<null, Readable, Readable>;
    try {
      child = spawn(command, args, {
        cwd: prepared.realWorkspace,
        env: sandboxed ? {} : this.#options.hostEnv,
        detached: true,
        // The runtime folders bubblewrap mounts arrive at RUNTIME_MOUNT_FDS (3, 4, 5).
        stdio: ["ignore", "pipe", "pipe", ...(mounts?.fds ?? [])],
      }) as ChildProcessByStdio<null, Readable, Readable>;
    } catch (error) {
      await mounts?.close();
      throw error;
    }
    // Listening at once: a failed spawn reports its error on the next tick.
    const spawnFailure = new Promise<Error>((resolve) => child.once("error", resolve));
    child.on("error", () => undefined);
    // The child has its copies of the descriptors once spawn returns. Not awaited: nothing may come between the spawn
    // and the listeners below (an exit missed there would never be seen).
    void mounts?.close();
    const pgid = child.pid;
    if (pgid === undefined) {
      const failure = await spawnFailure;
      throw new PedelecError("DENO_UNAVAILABLE", `could not start ${command}: ${failure.message}`);
    }
    const recorded = this.#options.processGroups?.record(pgid).catch(() => undefined);
    const stdout = new OutputCapture(child.stdout, limits.outputBytes, request.onOutput && ((chunk) => request.onOutput?.("stdout", chunk)));
    const stderr = new OutputCapture(child.stderr, limits.outputBytes, request.onOutput && ((chunk) => request.onOutput?.("stderr", chunk)));

    let termination = "exited" as RunTermination;
    let cancelReason: string | undefined;
    let killError: string | undefined;
    const stop = (why: Exclude<RunTermination, "exited">) => {
      if (termination !== "exited") return;
      termination = why;
      try {
        killGroup(pgid);
      } catch (error) {
        killError = `could not kill the run's process group ${pgid}: ${(error as Error).message}`;
      }
    };
    const tracker = sandboxed ? undefined : new DescendantTracker(pgid, pgid);
    const poll = () => {
      if (tracker !== undefined) tracker.poll();
      else if (groupResidentKib(pgid) > limits.rssMiB * 1024) stop("memory-limit");
    };
    const onAbort = () => {
      cancelReason = describeReason(request.signal?.reason);
      stop("cancelled");
    };
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
      child.once("exit", (code, signal) => resolve({ code, signal }));
    });
    // Full Access notes its first descendants at once; memory needs a moment to grow, so the sandbox waits a period.
    if (tracker !== undefined) poll();
    const poller = setInterval(poll, limits.pollMs);
    const timer = setTimeout(() => stop("timeout"), request.timeoutMs ?? DEFAULT_RUN_TIMEOUT_MS);
    request.signal?.addEventListener("abort", onAbort, { once: true });
    if (request.signal?.aborted) onAbort();

    const exit = await exited;
    const durationMs = performance.now() - started;
    clearInterval(poller);
    clearTimeout(timer);
    request.signal?.removeEventListener("abort", onAbort);
    // Whatever is left of the group goes now, then anything that left the group while we watched.
    tracker?.poll();
    let processTreeCleanupError = killError;
    try {
      killGroup(pgid);
    } catch (error) {
      processTreeCleanupError ??= `could not kill the run's process group ${pgid}: ${(error as Error).message}`;
    }
    const escaped = tracker?.killEscapees();
    await recorded;
    await this.#options.processGroups?.forget(pgid).catch(() => undefined);
    if (escaped !== undefined) processTreeCleanupError = processTreeCleanupError === undefined ? escaped : `${processTreeCleanupError}; ${escaped}`;

    let captureError = stdout.error ?? stderr.error;
    const streamsClosed = await Promise.race([
      Promise.all([stdout.done, stderr.done]).then(() => true),
      new Promise<false>((resolve) => setTimeout(() => resolve(false), STREAM_CLOSE_GRACE_MS).unref()),
    ]);
    if (!streamsClosed) {
      child.stdout.destroy();
      child.stderr.destroy();
      captureError ??= "the output pipes were still held open by a process outside the run after it ended; they were closed";
    }
    captureError ??= stdout.error ?? stderr.error;

    if (termination === "exited" && diedOfHeapExhaustion(exit, stderr.text())) termination = "memory-limit";
    const result: ScriptRunResult = {
      exitCode: exit.code,
      signal: exit.signal,
      stdout: stdout.text(),
      stderr: stderr.text(),
      stdoutTruncated: stdout.truncated,
      stderrTruncated: stderr.truncated,
      timedOut: termination === "timeout",
      durationMs,
      termination,
      access: request.access,
      walls: sandboxed ? ["deno-permissions", "bubblewrap"] : [],
      ...(processTreeCleanupError === undefined ? {} : { processTreeCleanupError }),
      ...(captureError === undefined ? {} : { captureError }),
    };
    return cancelReason === undefined ? { result } : { result, cancelReason };
  }
}

/** V8 ends a process whose heap is exhausted with a breakpoint trap (SIGTRAP, 5), which bubblewrap reports as 128 + 5. */
const HEAP_EXHAUSTION_EXIT_CODE = 133;
/** What V8 prints on stderr just before that trap. */
const HEAP_EXHAUSTION_MESSAGE = /^# Fatal (?:JavaScript|process) out of memory\b/m;

/**
 * Deno stopped by V8 at the heap limit: the trap (as a signal, or as bubblewrap's 133) AND V8's own message. A script
 * that merely exits 133 keeps its exit code as it is.
 */
function diedOfHeapExhaustion(exit: { code: number | null; signal: NodeJS.Signals | null }, stderr: string): boolean {
  const trapped = exit.signal === "SIGTRAP" || exit.code === HEAP_EXHAUSTION_EXIT_CODE;
  return trapped && HEAP_EXHAUSTION_MESSAGE.test(stderr);
}

function throwIfCancelled(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new PedelecError("DENO_CANCELLED", `the run was cancelled before it started: ${describeReason(signal.reason)}`);
}

function describeReason(reason: unknown): string {
  if (typeof reason === "string") return reason;
  if (reason instanceof Error) return reason.message;
  return "cancelled";
}

function checkRequestShape(request: ScriptRunRequest): void {
  if ((request.entry === undefined) === (request.source === undefined)) {
    throw new PedelecError("DENO_ENTRY_INVALID", "give exactly one of entry and source");
  }
  if (request.source !== undefined && (request.source.length === 0 || request.source.length > MAX_SCRIPT_SOURCE_LENGTH)) {
    throw new PedelecError("DENO_ENTRY_INVALID", `the script source must be 1 to ${MAX_SCRIPT_SOURCE_LENGTH} characters`);
  }
  const args = request.args ?? [];
  if (args.length > MAX_RUN_ARGS || args.some((argument) => typeof argument !== "string" || argument.length > MAX_RUN_ARG_LENGTH)) {
    throw new PedelecError("INVALID_INPUT", `at most ${MAX_RUN_ARGS} arguments of at most ${MAX_RUN_ARG_LENGTH} characters each`);
  }
  if (request.timeoutMs !== undefined && !(Number.isInteger(request.timeoutMs) && request.timeoutMs > 0)) {
    throw new PedelecError("INVALID_INPUT", "timeoutMs must be a positive integer");
  }
}

async function ensureExecutable(path: string): Promise<void> {
  try {
    await access(path, constants.X_OK);
  } catch {
    throw new PedelecError("DENO_UNAVAILABLE", `the Deno binary ${path} is missing or not executable; reinstall Pedelec (\`npm ci\`)`);
  }
}
