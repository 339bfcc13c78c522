import { spawn } from "node:child_process";
import { mkdtemp, readdir, rm, writeFile, mkdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ProcessGroupLedger } from "./process-group-ledger.js";
import { processAlive } from "./testing/process-group.js";

let folder: string;
const started: number[] = [];
beforeEach(async () => {
  folder = await mkdtemp(join(tmpdir(), "pedelec-ledger-"));
});
afterEach(async () => {
  for (const pid of started.splice(0)) {
    try {
      process.kill(-pid, "SIGKILL");
    } catch {
      // gone
    }
  }
  await rm(folder, { recursive: true, force: true });
});

/** A process group like a provider's: a shell leading a group, with a `sleep` grandchild. */
function startGroup(): { leader: number; exited: Promise<void> } {
  const child = spawn("/bin/sh", ["-c", "sleep 60 & wait"], { detached: true, stdio: "ignore" });
  started.push(child.pid!);
  return { leader: child.pid!, exited: new Promise((resolve) => child.on("exit", () => resolve())) };
}

describe("ProcessGroupLedger", () => {
  it("reaps the process groups a killed Core left behind, and forgets them", async () => {
    const group = startGroup();
    await new ProcessGroupLedger(folder).record(group.leader);
    const reaped = new ProcessGroupLedger(folder).reapLeftovers();
    expect(reaped).toEqual([group.leader]);
    await group.exited;
    await vi.waitFor(() => expect(processAlive(group.leader)).toBe(false), { timeout: 5_000 });
    expect(await readdir(folder)).toEqual([]);
  });

  it("leaves a process alone when its pid was reused by someone else", async () => {
    const group = startGroup();
    await mkdir(folder, { recursive: true });
    // Recorded with another start time: this pid now belongs to a different process.
    await writeFile(join(folder, String(group.leader)), "1");
    expect(new ProcessGroupLedger(folder).reapLeftovers()).toEqual([]);
    expect(processAlive(group.leader)).toBe(true);
    expect(await readdir(folder)).toEqual([]);
  });

  it("forgets a process that finished normally", async () => {
    const group = startGroup();
    const ledger = new ProcessGroupLedger(folder);
    await ledger.record(group.leader);
    await ledger.forget(group.leader);
    expect(ledger.reapLeftovers()).toEqual([]);
    expect(processAlive(group.leader)).toBe(true);
  });
});
