import { spawn } from "node:child_process";
import { realCliPath, type RealCli } from "../real-clis/real-clis.js";

/** One JSON line a CLI printed on stdout. */
export type PrintedEvent = Record<string, unknown>;

/** How a CLI process ended. */
export interface CliExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** A real CLI started in its own process group, with its stdout read as JSON lines. */
export interface RealCliProcess {
  /** Every stdout line that parsed as a JSON object, in order. */
  readonly events: readonly PrintedEvent[];
  /** Everything printed on stdout so far. */
  stdout(): string;
  /** Everything printed on stderr so far. */
  stderr(): string;
  /** Resolves with the first printed event (already printed or later) that matches; rejects after `timeoutMs`. */
  waitForEvent(matches: (event: PrintedEvent) => boolean, timeoutMs: number): Promise<PrintedEvent>;
  /** Resolves when the CLI exits; rejects after `timeoutMs` with what it printed so far. */
  waitForExit(timeoutMs: number): Promise<CliExit>;
  /** Ends the whole process group: SIGTERM, then SIGKILL after a short grace. Safe to call more than once. */
  stop(): Promise<void>;
}

/** The base environment of a CLI run: nothing of this process's own environment but PATH and a UTF-8 locale. */
export function cleanBaseEnvironment(): Record<string, string> {
  return { PATH: process.env.PATH ?? "/usr/local/bin:/usr/bin:/bin", LANG: "C.UTF-8" };
}

function printedSoFar(cli: RealCli, stdout: string, stderr: string): string {
  return `${cli} stdout:\n${stdout.slice(-4000)}\n${cli} stderr:\n${stderr.slice(-2000)}`;
}

/**
 * Starts a pinned real CLI with `args` in `cwd`, `env` as its whole environment and `stdin` as its input (`null`:
 * /dev/null). It leads its own process group, so `stop()` ends its children too.
 */
export function startRealCli(
  cli: RealCli,
  args: readonly string[],
  options: { cwd: string; env: Record<string, string>; stdin: string | null },
): RealCliProcess {
  const child = spawn(realCliPath(cli), args, {
    cwd: options.cwd,
    env: options.env,
    detached: true,
    stdio: [options.stdin === null ? "ignore" : "pipe", "pipe", "pipe"],
  });
  if (options.stdin !== null) child.stdin?.end(options.stdin);
  const events: PrintedEvent[] = [];
  const listeners = new Set<() => void>();
  let stdout = "";
  let stderr = "";
  let pending = "";
  let exit: CliExit | undefined;
  const notify = (): void => {
    for (const listener of listeners) listener();
  };
  child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
    stdout += chunk;
    pending += chunk;
    const lines = pending.split("\n");
    pending = lines.pop() ?? "";
    for (const line of lines) {
      try {
        const parsed: unknown = JSON.parse(line);
        if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)) events.push(parsed as PrintedEvent);
      } catch {
        // Not a JSON line; kept in `stdout` only.
      }
    }
    notify();
  });
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk;
  });
  const exited = new Promise<CliExit>((resolve) => {
    child.once("exit", (code, signal) => {
      exit = { code, signal };
      resolve(exit);
      notify();
    });
    child.once("error", () => resolve({ code: null, signal: null }));
  });

  function waitUntil<T>(found: () => T | undefined, timeoutMs: number, what: string): Promise<T> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const value = found();
        if (value === undefined) return;
        finish();
        resolve(value);
      };
      const finish = () => {
        clearTimeout(timer);
        listeners.delete(check);
      };
      const timer = setTimeout(() => {
        finish();
        reject(new Error(`${cli}: waited ${timeoutMs} ms for ${what}\n${printedSoFar(cli, stdout, stderr)}`));
      }, timeoutMs);
      listeners.add(check);
      check();
    });
  }

  const killGroup = (signal: NodeJS.Signals) => {
    try {
      if (child.pid !== undefined) process.kill(-child.pid, signal);
    } catch {
      // The group is gone already.
    }
  };

  return {
    events,
    stdout: () => stdout,
    stderr: () => stderr,
    waitForEvent: (matches, timeoutMs) => waitUntil(() => events.find(matches), timeoutMs, "a matching event"),
    waitForExit: (timeoutMs) => waitUntil(() => exit, timeoutMs, "the exit"),
    async stop() {
      if (exit === undefined) {
        killGroup("SIGTERM");
        const grace = new Promise((resolve) => setTimeout(resolve, 3000).unref());
        await Promise.race([exited, grace]);
      }
      // Whatever of the group outlived its leader.
      killGroup("SIGKILL");
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 1000).unref())]);
    },
  };
}
