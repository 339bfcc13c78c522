import { readFileSync } from "node:fs";
import { isProcessRunning, readProcessStat } from "../process-stat.js";

/** Polls `condition` every 20 ms until it holds or `deadlineMs` passed; says whether it held. */
export async function waitUntil(condition: () => boolean, deadlineMs: number): Promise<boolean> {
  const deadline = Date.now() + deadlineMs;
  while (Date.now() < deadline) {
    if (condition()) return true;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return condition();
}

/** Gone, or a zombie nobody reaped yet: either way it runs no more. */
export function isGone(pid: number): boolean {
  return !isProcessRunning(pid);
}

/** The pid a test process wrote into `file` (`echo $$ > file`), once the whole line is there. */
export async function pidFromFile(file: string, deadlineMs = 5_000): Promise<number> {
  let pid = 0;
  const written = await waitUntil(() => {
    let text = "";
    try {
      text = readFileSync(file, "utf8");
    } catch {
      return false;
    }
    pid = Number(text.trim());
    return text.endsWith("\n") && Number.isInteger(pid) && pid > 1;
  }, deadlineMs);
  if (!written) throw new Error(`no pid in ${file} within ${deadlineMs} ms`);
  return pid;
}

/**
 * The processes a test started or learnt of, so that none outlives it: `endAll()` (in afterEach) SIGKILLs each one
 * still there, and its group when it led one, and waits (bounded) until they are gone. A pid is signalled only while
 * it names the process it named when added (its start time), never one that later got the same pid.
 */
export class TestProcesses {
  /** Pid → start time when added. */
  readonly #started = new Map<number, string | undefined>();

  add(pid: number): number {
    this.#started.set(pid, readProcessStat(pid)?.startTime);
    return pid;
  }

  async endAll(deadlineMs = 5_000): Promise<void> {
    const pids: number[] = [];
    for (const [pid, startTime] of this.#started) {
      if (startTime !== undefined && readProcessStat(pid)?.startTime === startTime) pids.push(pid);
    }
    this.#started.clear();
    for (const pid of pids) {
      for (const target of [-pid, pid]) {
        try {
          process.kill(target, "SIGKILL");
        } catch {
          // Already gone, or it led no group.
        }
      }
    }
    if (!(await waitUntil(() => pids.every(isGone), deadlineMs))) {
      throw new Error(`test processes still running: ${pids.filter((pid) => !isGone(pid)).join(", ")}`);
    }
  }
}
