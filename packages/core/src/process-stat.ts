import { readFileSync } from "node:fs";

export interface ProcessStat {
  /** One letter: R running, S sleeping, Z zombie (exited, not yet reaped), … */
  state: string;
  /** Start time in clock ticks since boot: with the pid, it names one process even after the pid is reused. */
  startTime: string;
}

/** Reads /proc/<pid>/stat (Linux). Null when the process is gone or /proc is not available. */
export function readProcessStat(pid: number): ProcessStat | null {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return null;
  }
  // The command name (field 2) may contain spaces and parentheses; the fields after its last ")" are fixed.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const [state, startTime] = [fields[0], fields[19]];
  return state === undefined || startTime === undefined ? null : { state, startTime };
}

/** A zombie still answers kill(pid, 0) but runs nothing and holds nothing. */
export function isZombie(pid: number): boolean {
  return readProcessStat(pid)?.state === "Z";
}
