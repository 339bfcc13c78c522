// Through `fs.promises`, read when a provider or script first runs: loading node:fs/promises with this module cost
// Core's start half a millisecond.
import { promises as fs, readdirSync } from "node:fs";
import { join } from "node:path";
import type { ProcessGroupWatchdog } from "./process-group-watchdog.js";
import { readProcessStat } from "./process-stat.js";
import { isProcessTag, killTaggedProcesses } from "./process-tag.js";
import { readTextQuietly, unlinkQuietly } from "./quiet-files.js";

/**
 * Process groups Core started and has not seen finish (provider turns in `run/provider-processes/`, script runs in
 * `run/script-processes/`), one file each: the leader's start time and, for a provider run, its process tag
 * (process-tag.ts). A Core that is killed cannot stop them: the watchdog kills them at once, and the next Core reads
 * what is left here and ends any group, and any tagged process, that survived even that (the watchdog was killed too).
 */
export class ProcessGroupLedger {
  constructor(
    private readonly folder: string,
    private readonly watchdog?: ProcessGroupWatchdog,
  ) {}

  /** Records the group `pid` leads and, when given, the tag that every process of its run carries. */
  async record(pid: number, processTag?: string): Promise<void> {
    const tag = processTag !== undefined && isProcessTag(processTag) ? processTag : undefined;
    this.watchdog?.watch(pid, tag);
    await fs.mkdir(this.folder, { recursive: true, mode: 0o700 });
    // The start time tells the group we started from an unrelated process that later got the same pid.
    const startTime = readProcessStat(pid)?.startTime ?? "";
    await fs.writeFile(join(this.folder, String(pid)), tag === undefined ? startTime : `${startTime}\n${tag}`, { mode: 0o600 });
  }

  async forget(pid: number): Promise<void> {
    this.watchdog?.release(pid);
    await fs.rm(join(this.folder, String(pid)), { force: true });
  }

  /**
   * Kills every recorded group whose leader is still the process we started, and every process carrying a recorded
   * tag, whether or not its leader is still there (a tool the CLI ran in its own session outlives the CLI; the tag is
   * ours alone, so no start time is needed to trust it); returns the pids it killed. Synchronous: Core runs it once,
   * before it listens.
   */
  reapLeftovers(): number[] {
    let names: string[];
    try {
      names = readdirSync(this.folder);
    } catch {
      return [];
    }
    const killed: number[] = [];
    const tags = new Set<string>();
    for (const name of names) {
      const pid = Number.parseInt(name, 10);
      const [recorded = "", tag = ""] = readTextQuietly(join(this.folder, name)).split("\n");
      if (isProcessTag(tag)) tags.add(tag);
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
    if (tags.size > 0) {
      for (const pid of killTaggedProcesses(tags)) if (!killed.includes(pid)) killed.push(pid);
    }
    return killed;
  }
}
