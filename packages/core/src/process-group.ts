import type { ChildProcess } from "node:child_process";

/** Sends `signal` to the process group `child` leads (it was spawned detached); a group already gone is left be. */
export function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // ESRCH: the group is already gone.
  }
}
