import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { performance } from "node:perf_hooks";
import { killTaggedProcesses, PROCESS_TAG_VARIABLE } from "@pedelec/core/process-tag";

/** What one real CLI run is started with. */
export interface RealCliRunOptions {
  executablePath: string;
  args: readonly string[];
  cwd: string;
  /** The whole environment of the child; nothing of the recorder's own is added but the run's process tag. */
  env: Record<string, string>;
  /** Written to stdin, which is then closed (the adapters pass the prompt this way). */
  stdin: string;
  /** The run is ended (SIGTERM to its group, SIGKILL 2 s later) when it has not exited by then. */
  timeoutMs: number;
}

/** How one real CLI run went. */
export interface RealCliRun {
  /** Every byte the CLI wrote to stdout, as written. */
  stdout: Buffer;
  stderr: string;
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  /** The recorder ended the run at `timeoutMs`. */
  timedOut: boolean;
  /** The value of `PROCESS_TAG_VARIABLE` the run had. */
  processTag: string;
  durationMs: number;
}

const KILL_GRACE_MS = 2_000;
/** How long to keep reading after the CLI exited while something it started still holds the pipes. */
const DRAIN_GRACE_MS = 5_000;

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // ESRCH: the group is gone already.
  }
}

/**
 * Runs a CLI as the leader of its own process group (spawned detached) with a fresh process tag in its environment,
 * the way Core runs providers, and settles once it has exited and its output is read. At the end the whole group is
 * killed, and so is every process carrying the tag (the shell tools of claude and opencode leave the group).
 */
export function runRealCli(options: RealCliRunOptions): Promise<RealCliRun> {
  const tag = randomBytes(16).toString("hex");
  const started = performance.now();
  const child = spawn(options.executablePath, [...options.args], {
    cwd: options.cwd,
    env: { ...options.env, [PROCESS_TAG_VARIABLE]: tag },
    detached: true,
    stdio: ["pipe", "pipe", "pipe"],
  });
  const stdout: Buffer[] = [];
  const stderr: Buffer[] = [];
  let timedOut = false;
  const timers: NodeJS.Timeout[] = [];
  child.stdout.on("data", (chunk: Buffer) => stdout.push(chunk));
  child.stderr.on("data", (chunk: Buffer) => stderr.push(chunk));
  child.stdin.on("error", () => {});
  child.stdin.end(options.stdin);
  timers.push(
    setTimeout(() => {
      timedOut = true;
      const pid = child.pid;
      if (pid === undefined) return;
      signalGroup(pid, "SIGTERM");
      timers.push(setTimeout(() => signalGroup(pid, "SIGKILL"), KILL_GRACE_MS));
    }, options.timeoutMs),
  );
  child.on("exit", () => {
    timers.push(
      setTimeout(() => {
        child.stdout.destroy();
        child.stderr.destroy();
      }, DRAIN_GRACE_MS),
    );
  });
  return new Promise((resolve, reject) => {
    child.on("error", (error) => {
      if (child.pid === undefined) {
        for (const timer of timers) clearTimeout(timer);
        reject(error);
      }
    });
    child.on("close", (exitCode, signal) => {
      for (const timer of timers) clearTimeout(timer);
      if (child.pid !== undefined) signalGroup(child.pid, "SIGKILL");
      killTaggedProcesses(new Set([tag]));
      resolve({
        stdout: Buffer.concat(stdout),
        stderr: Buffer.concat(stderr).toString("utf8"),
        exitCode,
        signal,
        timedOut,
        processTag: tag,
        durationMs: performance.now() - started,
      });
    });
  });
}
