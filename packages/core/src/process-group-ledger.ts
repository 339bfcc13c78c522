// Through `fs.promises`, read when a provider or script first runs: loading node:fs/promises with this module cost
// Core's start half a millisecond.
import { promises as fs, readdirSync } from "node:fs";
import { join } from "node:path";
import type { ProcessGroupWatchdog } from "./process-group-watchdog.js";
import { readProcessStat } from "./process-stat.js";
import { readTextQuietly, unlinkQuietly } from "./quiet-files.js";

/**
 * Process groups Core started and has not seen finish (provider turns in `run/provider-processes/`, script runs in
 * `run/script-processes/`), one file each. A Core that is killed cannot stop them: the watchdog kills them at once,
 * and the next Core reads what is left here and ends any group that survived even that (the watchdog was killed too).
 */
export class ProcessGroupLedger {
  constructor(
    private readonly folder: string,
    private readonly watchdog?: ProcessGroupWatchdog,
  ) {}

  async record(pid: number): Promise<void> {
    this.watchdog?.watch(pid);
    await fs.mkdir(this.folder, { recursive: true, mode: 0o700 });
    // The start time tells the group we started from an unrelated process that later got the same pid.
    await fs.writeFile(join(this.folder, String(pid)), readProcessStat(pid)?.startTime ?? "", { mode: 0o600 });
  }

  async forget(pid: number): Promise<void> {
    this.watchdog?.release(pid);
    await fs.rm(join(this.folder, String(pid)), { force: true });
  }

  /**
   * Kills every recorded group whose leader is still the process we started; returns the pids it killed. Synchronous:
   * Core runs it once, before it listens.
   */
  reapLeftovers(): number[] {
    let names: string[];
    try {
      names = readdirSync(this.folder);
    } catch {
      return [];
    }
    const killed: number[] = [];
    for (const name of names) {
      const pid = Number.parseInt(name, 10);
      const recorded = readTextQuietly(join(this.folder, name));
      if (Number.isInteger(pid) && pid > 1 && recorded !== "" && readProcessStat(pid)?.startTime === recorded) {
        try {
          process.kill(-pid, "SIGKILL");
          killed.push(pid);
        } catch {
          // The group is already gone.
        }
      }
      unlinkQuietly(join(this.folder, name));
    }
    return killed;
  }
}
