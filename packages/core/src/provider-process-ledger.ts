import { mkdir, readFile, readdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";

/**
 * Process start time as the kernel reports it (field 22 of /proc/<pid>/stat), so a recorded pid that was reused by
 * an unrelated process is never mistaken for ours. Null where /proc is not available.
 */
async function startTimeOf(pid: number): Promise<string | null> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) may contain spaces and parentheses; the fields after its last ")" are fixed.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return fields[19] ?? null;
  } catch {
    return null;
  }
}

/**
 * Provider process groups Core started and has not seen finish, one file each in `run/provider-processes/`. A Core
 * that is killed cannot stop its providers; the next Core reads what is left here and ends those groups.
 */
export class ProviderProcessLedger {
  constructor(private readonly folder: string) {}

  async record(pid: number): Promise<void> {
    await mkdir(this.folder, { recursive: true, mode: 0o700 });
    await writeFile(join(this.folder, String(pid)), (await startTimeOf(pid)) ?? "", { mode: 0o600 });
  }

  async forget(pid: number): Promise<void> {
    await rm(join(this.folder, String(pid)), { force: true });
  }

  /** Kills every recorded group whose leader is still the process we started; returns the pids it killed. */
  async reapLeftovers(): Promise<number[]> {
    let names: string[];
    try {
      names = await readdir(this.folder);
    } catch {
      return [];
    }
    const killed: number[] = [];
    for (const name of names) {
      const pid = Number.parseInt(name, 10);
      const recorded = await readFile(join(this.folder, name), "utf8").catch(() => "");
      if (Number.isInteger(pid) && pid > 1 && recorded !== "" && (await startTimeOf(pid)) === recorded) {
        try {
          process.kill(-pid, "SIGKILL");
          killed.push(pid);
        } catch {
          // The group is already gone.
        }
      }
      await rm(join(this.folder, name), { force: true });
    }
    return killed;
  }
}
