import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { log } from "../logger.js";
import { signalGroup } from "../process-group.js";
import { endTaggedProcesses, PROCESS_TAG_VARIABLE, type TaggedProcessesEnded } from "../process-tag.js";
import { LineSplitter } from "./line-splitter.js";

/** One stream line carries a whole message, so long answers need room; Core's frame limit is the useful ceiling. */
export const DEFAULT_MAX_LINE_BYTES = 16 * 1024 * 1024;
export const DEFAULT_MAX_STDERR_BYTES = 64 * 1024;
export const DEFAULT_KILL_GRACE_MS = 2_000;
export const DEFAULT_DRAIN_GRACE_MS = 5_000;

export interface ProviderProcessOptions {
  executablePath: string;
  args: readonly string[];
  /** Working directory of the child (the session workspace). */
  cwd: string;
  /**
   * The child's environment; nothing from Core's own environment is added. The run's tag is added as
   * `PROCESS_TAG_VARIABLE` (a value given there is replaced).
   */
  env: Record<string, string>;
  /** Written to stdin, which is then closed. */
  stdin: string;
  /** Aborting kills the child's whole process group, and then every process carrying the run's tag. */
  signal: AbortSignal;
  onStdoutLine: (line: string) => void;
  /** The child started and leads process group `pid`; it and everything it starts carry `processTag`. */
  onSpawned?: (pid: number, processTag: string) => void;
  /** A stdout line longer than `maxLineBytes` was dropped. */
  onStdoutLineDropped?: (byteLength: number) => void;
  maxLineBytes?: number;
  maxStderrBytes?: number;
  /**
   * Time between SIGTERM and SIGKILL of the process group after an abort, and of the tagged processes left once the
   * child exited.
   */
  killGraceMs?: number;
  /**
   * How long to keep reading after the child exited while its pipes stay open (a background grandchild holding
   * them). Past it Core stops reading and only our pipe ends close; the grandchild, being tagged, is ended anyway
   * where /proc exists.
   */
  drainGraceMs?: number;
}

export interface ProviderProcessResult {
  /** Null when the child was killed by a signal or never started. */
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  /** The first `maxStderrBytes` bytes of stderr. */
  stderr: string;
  stderrTruncated: boolean;
  /** Set when the executable could not be started (ENOENT, EACCES, …). */
  spawnError: { code: string; message: string } | null;
  droppedLineCount: number;
}

/** A fresh tag for one run: 128 random bits as hex (the shape `isProcessTag` accepts). */
export function newProcessTag(): string {
  return randomBytes(16).toString("hex");
}

/**
 * Runs a provider CLI as the leader of its own process group, so a cancel reaches every process it started, with a
 * fresh tag in its environment (`PROCESS_TAG_VARIABLE`), so that the processes it starts in a session and group of
 * their own (setsid) are found too. Settles (never rejects) once the child exited, its stdout and stderr are drained,
 * and, where /proc exists, no process carrying the tag is left, however the run ended: cancelled, or the CLI exited
 * or crashed. Without /proc only the group of a cancelled run is killed.
 */
export async function runProviderProcess(options: ProviderProcessOptions): Promise<ProviderProcessResult> {
  let leader: number | undefined;
  const tag = newProcessTag();
  let sweep: Promise<TaggedProcessesEnded> | undefined;
  const result = await new Promise<ProviderProcessResult>((resolve) => {
    const maxStderrBytes = options.maxStderrBytes ?? DEFAULT_MAX_STDERR_BYTES;
    const killGraceMs = options.killGraceMs ?? DEFAULT_KILL_GRACE_MS;
    const drainGraceMs = options.drainGraceMs ?? DEFAULT_DRAIN_GRACE_MS;
    const stderrPieces: Buffer[] = [];
    let stderrBytes = 0;
    let stderrTruncated = false;
    let droppedLineCount = 0;
    let settled = false;
    const timers: NodeJS.Timeout[] = [];

    const finish = (result: Omit<ProviderProcessResult, "stderr" | "stderrTruncated" | "droppedLineCount">): void => {
      if (settled) return;
      settled = true;
      for (const timer of timers) clearTimeout(timer);
      options.signal.removeEventListener("abort", onAbort);
      resolve({
        ...result,
        stderr: Buffer.concat(stderrPieces, stderrBytes).toString("utf8"),
        stderrTruncated,
        droppedLineCount,
      });
    };

    if (options.signal.aborted) {
      finish({ exitCode: null, signal: null, spawnError: null });
      return;
    }

    let child: ChildProcess;
    try {
      child = spawn(options.executablePath, [...options.args], {
        cwd: options.cwd,
        env: { ...options.env, [PROCESS_TAG_VARIABLE]: tag },
        detached: true,
        stdio: ["pipe", "pipe", "pipe"],
      });
    } catch (error) {
      // spawn throws synchronously for bad arguments (e.g. a NUL byte in an argument).
      finish({ exitCode: null, signal: null, spawnError: describeSpawnError(error) });
      return;
    }
    leader = child.pid;
    if (child.pid !== undefined) options.onSpawned?.(child.pid, tag);

    const splitter = new LineSplitter({
      maxLineBytes: options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES,
      onLine: options.onStdoutLine,
      onLineDropped: (byteLength) => {
        droppedLineCount += 1;
        options.onStdoutLineDropped?.(byteLength);
      },
    });

    child.stdout?.on("data", (chunk: Buffer) => splitter.push(chunk));
    child.stdout?.on("close", () => splitter.end());
    child.stderr?.on("data", (chunk: Buffer) => {
      if (stderrBytes >= maxStderrBytes) {
        stderrTruncated = true;
        return;
      }
      const room = maxStderrBytes - stderrBytes;
      const kept = chunk.length > room ? chunk.subarray(0, room) : chunk;
      if (kept.length < chunk.length) stderrTruncated = true;
      stderrPieces.push(kept);
      stderrBytes += kept.length;
    });

    // A child that exits without reading its prompt makes the write fail with EPIPE; that is its own business.
    child.stdin?.on("error", () => {});
    child.stdin?.end(options.stdin);

    child.on("error", (error) => {
      if (child.pid === undefined) finish({ exitCode: null, signal: null, spawnError: describeSpawnError(error) });
    });
    child.on("exit", () => {
      // Whatever still carries the tag outlived the CLI: a background command, a tool in its own session. Ending it
      // now also closes the pipes it may hold, so the run need not sit out the drain grace.
      sweep = endTaggedProcesses(tag, { graceMs: killGraceMs });
      timers.push(
        setTimeout(() => {
          child.stdout?.destroy();
          child.stderr?.destroy();
        }, drainGraceMs),
      );
    });
    // "close" comes after the exit and after every stdio stream closed, so all output has been read.
    child.on("close", (exitCode, signal) => finish({ exitCode, signal, spawnError: null }));

    function onAbort(): void {
      signalGroup(child, "SIGTERM");
      timers.push(
        setTimeout(() => {
          // Escalate when the leader ignores SIGTERM, or when something in the group still holds our pipes.
          if (!settled) signalGroup(child, "SIGKILL");
        }, killGraceMs),
      );
    }
    options.signal.addEventListener("abort", onAbort, { once: true });
  });
  // A cancelled run is over only when nothing of its group is left: whatever outlived SIGTERM goes now.
  if (options.signal.aborted && leader !== undefined) await killGroupAndWait(leader);
  if (sweep !== undefined) reportSweep(await sweep);
  return result;
}

function reportSweep(ended: TaggedProcessesEnded): void {
  if (ended.left.length > 0) {
    log("warn", "processes of a provider run would not end", { pids: ended.left });
  } else if (ended.signalled.length > 0) {
    log("info", "stopped processes a provider run left behind", { pids: ended.signalled });
  }
}

const GROUP_GONE_TIMEOUT_MS = 2_000;

/** SIGKILLs the process group `pgid` and waits (bounded) until no process of it is left. */
async function killGroupAndWait(pgid: number): Promise<void> {
  const deadline = Date.now() + GROUP_GONE_TIMEOUT_MS;
  try {
    process.kill(-pgid, "SIGKILL");
  } catch {
    return;
  }
  while (groupExists(pgid) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
}

function groupExists(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

function describeSpawnError(error: unknown): { code: string; message: string } {
  const code = (error as { code?: unknown }).code;
  return {
    code: typeof code === "string" ? code : "SPAWN_FAILED",
    message: error instanceof Error ? error.message : String(error),
  };
}
