import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readdir, readFile, rm, writeFile, mkdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ProcessGroupLedger } from "./process-group-ledger.js";
import { PROCESS_TAG_VARIABLE } from "./process-tag.js";
import { newProcessTag } from "./providers/provider-process.js";
import { processAlive } from "./testing/process-group.js";
import { isGone, pidFromFile, TestProcesses, waitUntil } from "./testing/test-processes.js";

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

  it.skipIf(!existsSync("/proc/self/environ"))(
    "reaps the tagged processes of a recorded run whose leader is gone, and spares another run's",
    async () => {
      const work = await mkdtemp(join(tmpdir(), "pedelec-ledger-run-"));
      const others = new TestProcesses();
      try {
        const tag = newProcessTag();
        // The CLI ran its tool in a session of its own, then died (SIGKILL) and left the tool running.
        const cli = spawn("/bin/sh", ["-c", "setsid /bin/sh -c 'echo $$ > tool.pid; exec sleep 300' & wait"], {
          cwd: work,
          env: { PATH: process.env.PATH ?? "/usr/bin:/bin", [PROCESS_TAG_VARIABLE]: tag },
          detached: true,
          stdio: "ignore",
        });
        others.add(cli.pid!);
        const tool = others.add(await pidFromFile(join(work, "tool.pid")));
        const bystander = spawn("sleep", ["300"], { env: { [PROCESS_TAG_VARIABLE]: newProcessTag() }, detached: true, stdio: "ignore" });
        others.add(bystander.pid!);

        await new ProcessGroupLedger(folder).record(cli.pid!, tag);
        expect((await readFile(join(folder, String(cli.pid)), "utf8")).split("\n")[1]).toBe(tag);
        process.kill(-cli.pid!, "SIGKILL");
        expect(await waitUntil(() => isGone(cli.pid!), 5_000)).toBe(true);
        expect(isGone(tool)).toBe(false);

        const reaped = new ProcessGroupLedger(folder).reapLeftovers();
        expect(reaped).toContain(tool);
        expect(reaped).not.toContain(bystander.pid);
        expect(await waitUntil(() => isGone(tool), 5_000)).toBe(true);
        expect(isGone(bystander.pid!)).toBe(false);
        expect(await readdir(folder)).toEqual([]);
      } finally {
        await others.endAll();
        await rm(work, { recursive: true, force: true });
      }
    },
  );

  it("forgets a process that finished normally", async () => {
    const group = startGroup();
    const ledger = new ProcessGroupLedger(folder);
    await ledger.record(group.leader);
    await ledger.forget(group.leader);
    expect(ledger.reapLeftovers()).toEqual([]);
    expect(processAlive(group.leader)).toBe(true);
  });
});
