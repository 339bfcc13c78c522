import { listProcesses, readProcessEntry } from "./process-table.js";

interface NotedProcess {
  pid: number;
  startTime: string;
  command: string;
}

/**
 * Follows a Full Access run's processes so that those which leave its process group (setsid, a detached spawn, a
 * double fork re-parented to init) can still be killed at the end. Each poll notes every process whose parent chain
 * leads to the run, or that is in its group, together with its start time so a reused pid is never taken for it.
 * A process that is started and escapes between two polls is never seen: this narrows the gap, it does not close it.
 */
export class DescendantTracker {
  readonly #noted = new Map<string, NotedProcess>();

  constructor(
    private readonly rootPid: number,
    private readonly pgid: number,
  ) {}

  poll(): void {
    const processes = listProcesses();
    const children = new Map<number, number[]>();
    for (const entry of processes) {
      const siblings = children.get(entry.ppid);
      if (siblings === undefined) children.set(entry.ppid, [entry.pid]);
      else siblings.push(entry.pid);
    }
    const byPid = new Map(processes.map((entry) => [entry.pid, entry]));
    // Start from the run and from everything noted before: a noted process whose parent exited still leads to its own children.
    const roots = new Set<number>([this.rootPid]);
    for (const noted of this.#noted.values()) {
      if (byPid.get(noted.pid)?.startTime === noted.startTime) roots.add(noted.pid);
    }
    for (const entry of processes) if (entry.pgrp === this.pgid) roots.add(entry.pid);
    const queue = [...roots];
    const seen = new Set<number>();
    while (queue.length > 0) {
      const pid = queue.pop() as number;
      if (seen.has(pid)) continue;
      seen.add(pid);
      const entry = byPid.get(pid);
      if (entry !== undefined && entry.state !== "Z") {
        this.#noted.set(`${pid}:${entry.startTime}`, { pid, startTime: entry.startTime, command: entry.command });
      }
      for (const child of children.get(pid) ?? []) queue.push(child);
    }
  }

  /** How many distinct processes have been noted (for tests and diagnostics). */
  get notedCount(): number {
    return this.#noted.size;
  }

  /**
   * After the group was killed: SIGKILLs every noted process that is still the same process, still alive and outside
   * the group. Returns a message for `processTreeCleanupError`, or undefined when nothing had left the group.
   */
  killEscapees(): string | undefined {
    const escaped: NotedProcess[] = [];
    for (const noted of this.#noted.values()) {
      const now = readProcessEntry(noted.pid);
      if (now === null || now.startTime !== noted.startTime || now.state === "Z" || now.pgrp === this.pgid) continue;
      escaped.push(noted);
    }
    if (escaped.length === 0) return undefined;
    const failures: string[] = [];
    for (const process_ of escaped) {
      try {
        process.kill(process_.pid, "SIGKILL");
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code !== "ESRCH") failures.push(`${process_.pid}: ${code ?? (error as Error).message}`);
      }
    }
    const count = escaped.length === 1 ? "1 process" : `${escaped.length} processes`;
    const list = escaped.map((entry) => `${entry.pid} (${entry.command})`).join(", ");
    const outcome = failures.length === 0 ? "killed" : `could not be killed: ${failures.join(", ")}`;
    return `${count} left the run's process group: ${list} — ${outcome}`;
  }
}
