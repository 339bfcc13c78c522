import { readdirSync, readFileSync } from "node:fs";

/** One line of the process table, as /proc tells it (Linux). */
export interface ProcessEntry {
  pid: number;
  /** Short command name (field 2 of /proc/<pid>/stat). */
  command: string;
  /** One letter: R running, S sleeping, Z zombie, … */
  state: string;
  ppid: number;
  /** Process group id. */
  pgrp: number;
  /** Start time in clock ticks since boot (field 22): with the pid, it names one process even after the pid is reused. */
  startTime: string;
}

/** Parses /proc/<pid>/stat; null when the process is gone or /proc is not there. */
export function readProcessEntry(pid: number): ProcessEntry | null {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return null;
  }
  return parseStat(pid, stat);
}

export function parseStat(pid: number, stat: string): ProcessEntry | null {
  // The command name may hold spaces and parentheses; the fields after its last ")" are fixed.
  const open = stat.indexOf("(");
  const close = stat.lastIndexOf(")");
  if (open < 0 || close < open) return null;
  const fields = stat.slice(close + 2).split(" ");
  const [state, ppid, pgrp, startTime] = [fields[0], fields[1], fields[2], fields[19]];
  if (state === undefined || ppid === undefined || pgrp === undefined || startTime === undefined) return null;
  return { pid, command: stat.slice(open + 1, close), state, ppid: Number(ppid), pgrp: Number(pgrp), startTime };
}

/** Every process visible in /proc now. */
export function listProcesses(): ProcessEntry[] {
  let names: string[];
  try {
    names = readdirSync("/proc");
  } catch {
    return [];
  }
  const entries: ProcessEntry[] = [];
  for (const name of names) {
    const pid = Number(name);
    if (!Number.isInteger(pid) || pid <= 0) continue;
    const entry = readProcessEntry(pid);
    if (entry !== null) entries.push(entry);
  }
  return entries;
}

/** Resident memory of one process in KiB (VmRSS); 0 when it is gone or a zombie (which has none). */
export function readResidentKib(pid: number): number {
  let status: string;
  try {
    status = readFileSync(`/proc/${pid}/status`, "utf8");
  } catch {
    return 0;
  }
  const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
  return match?.[1] === undefined ? 0 : Number(match[1]);
}

/** Sum of VmRSS over every process whose process group is `pgid`, in KiB. */
export function groupResidentKib(pgid: number): number {
  let total = 0;
  for (const entry of listProcesses()) {
    if (entry.pgrp === pgid) total += readResidentKib(entry.pid);
  }
  return total;
}

/** Sends SIGKILL to a whole process group; a group that is already gone is not an error. */
export function killGroup(pgid: number): void {
  try {
    process.kill(-pgid, "SIGKILL");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ESRCH") throw error;
  }
}
