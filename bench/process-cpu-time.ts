import { execFileSync } from "node:child_process";
import { readFileSync, readdirSync } from "node:fs";

/** The unit of the CPU times in /proc/<pid>/stat. */
const TICKS_PER_SECOND = Number.parseInt(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }), 10) || 100;

/** One live process as /proc shows it. */
export interface ProcessCpu {
  pid: number;
  parentPid: number;
  /** User + system time of the process itself, in seconds. */
  ownSeconds: number;
  /** User + system time of its children that exited and were waited for, in seconds. */
  reapedChildrenSeconds: number;
  /** Arguments joined with spaces. */
  commandLine: string;
}

/** Reads one process, or undefined when it is gone (or is not readable). */
export function readProcessCpu(pid: number): ProcessCpu | undefined {
  let stat: string;
  let commandLine: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    commandLine = readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ").trim();
  } catch {
    return undefined;
  }
  // The command name (field 2) is in parentheses and may hold spaces; the numbered fields follow the last ")".
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const ticks = (index: number) => Number(fields[index] ?? 0);
  return {
    pid,
    parentPid: ticks(1),
    ownSeconds: (ticks(11) + ticks(12)) / TICKS_PER_SECOND,
    reapedChildrenSeconds: (ticks(13) + ticks(14)) / TICKS_PER_SECOND,
    commandLine,
  };
}

/** Every process this user can read, by pid. */
export function readAllProcesses(): Map<number, ProcessCpu> {
  const found = new Map<number, ProcessCpu>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const read = readProcessCpu(Number(entry));
    if (read) found.set(read.pid, read);
  }
  return found;
}

/** `root` and everything started under it, as the parent links stand right now. */
export function descendantsOf(root: number, processes: ReadonlyMap<number, ProcessCpu>): Set<number> {
  const children = new Map<number, number[]>();
  for (const { pid, parentPid } of processes.values()) {
    const siblings = children.get(parentPid) ?? [];
    siblings.push(pid);
    children.set(parentPid, siblings);
  }
  const found = new Set<number>();
  const waiting = [root];
  for (let pid = waiting.pop(); pid !== undefined; pid = waiting.pop()) {
    if (found.has(pid) || !processes.has(pid)) continue;
    found.add(pid);
    waiting.push(...(children.get(pid) ?? []));
  }
  return found;
}

/** CPU seconds seen so far, by group, then by the pid they were read from. */
export type CpuSnapshot = Map<string, Map<number, number>>;

/** Adds `seconds` read from `pid` to `group` of `snapshot`. */
export function addToSnapshot(snapshot: CpuSnapshot, group: string, pid: number, seconds: number): void {
  const byPid = snapshot.get(group) ?? new Map<number, number>();
  byPid.set(pid, (byPid.get(pid) ?? 0) + seconds);
  snapshot.set(group, byPid);
}

/**
 * CPU seconds each group spent between two snapshots. A process that started in between counts from zero; one that
 * ended in between is not seen, so groups should be made of processes that outlive the interval (or of their parents'
 * reaped-children time).
 */
export function cpuBetween(before: CpuSnapshot, after: CpuSnapshot): Map<string, number> {
  const spent = new Map<string, number>();
  for (const [group, byPid] of after) {
    let total = 0;
    for (const [pid, seconds] of byPid) total += seconds - (before.get(group)?.get(pid) ?? 0);
    spent.set(group, total);
  }
  return spent;
}
