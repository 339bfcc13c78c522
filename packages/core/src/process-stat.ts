import { readProcessEntry } from "@pedelec/script-runtime/process-table";

export interface ProcessStat {
  /** One letter: R running, S sleeping, Z zombie (exited, not yet reaped), … */
  state: string;
  /** Start time in clock ticks since boot: with the pid, it names one process even after the pid is reused. */
  startTime: string;
}

/** Reads /proc/<pid>/stat (Linux). Null when the process is gone or /proc is not available. */
export function readProcessStat(pid: number): ProcessStat | null {
  const entry = readProcessEntry(pid);
  return entry === null ? null : { state: entry.state, startTime: entry.startTime };
}

/** A zombie still answers kill(pid, 0) but runs nothing and holds nothing. */
export function isZombie(pid: number): boolean {
  return readProcessStat(pid)?.state === "Z";
}

/**
 * Whether `pid` names a process that still runs: one that answers kill(pid, 0) (EPERM: it exists, under another
 * user) and is not a zombie, which runs nothing and holds nothing.
 */
export function isProcessRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
  return !isZombie(pid);
}
