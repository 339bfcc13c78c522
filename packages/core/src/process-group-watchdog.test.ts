import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { copyFile, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { readProcessEntry } from "@pedelec/script-runtime/process-table";
import { ProcessGroupWatchdog } from "./process-group-watchdog.js";
import { PROCESS_TAG_VARIABLE } from "./process-tag.js";
import { newProcessTag } from "./providers/provider-process.js";
import { bundleTestProgram } from "./testing/bundle-test-program.js";
import { groupAlive } from "./testing/process-group.js";
import { isGone, pidFromFile, TestProcesses, waitUntil as waitFor } from "./testing/test-processes.js";

const started: number[] = [];
afterEach(() => {
  for (const pid of started.splice(0)) {
    try {
      process.kill(-pid, "SIGKILL");
    } catch {
      // Already gone.
    }
  }
});

/** A process group of two sleepers (a leader and its child), like a provider that ran a command. */
function startGroup(): number {
  const child = spawn("/bin/sh", ["-c", "sleep 60 & sleep 60"], { detached: true, stdio: "ignore" });
  child.unref();
  started.push(child.pid!);
  return child.pid!;
}

async function waitUntil(condition: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`not true within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe("ProcessGroupWatchdog", () => {
  it("kills the groups still registered when Core's end of the pipe closes, and spares released ones", async () => {
    const watchdog = new ProcessGroupWatchdog();
    const registered = startGroup();
    const released = startGroup();
    watchdog.watch(registered);
    watchdog.watch(released);
    watchdog.release(released);
    await waitUntil(() => watchdog.pid !== undefined);
    watchdog.close();
    await waitUntil(() => !groupAlive(registered));
    expect(groupAlive(released)).toBe(true);
  });

  it("starts its companion again if it dies, still watching every group", async () => {
    const watchdog = new ProcessGroupWatchdog();
    const group = startGroup();
    watchdog.watch(group);
    const first = watchdog.pid!;
    process.kill(first, "SIGKILL");
    await waitUntil(() => watchdog.pid !== undefined && watchdog.pid !== first);
    expect(groupAlive(group)).toBe(true);
    watchdog.close();
    await waitUntil(() => !groupAlive(group));
  });

  it.skipIf(!existsSync("/proc/self/environ"))(
    "kills the tagged processes of a run, also those in a session of their own, when Core is SIGKILLed mid-turn",
    async () => {
      const home = await mkdtemp(join(tmpdir(), "pedelec-watchdog-"));
      const processes = new TestProcesses();
      try {
        // A stand-in Core: the real watchdog and the real provider runner, starting a CLI whose tool left its session.
        // Bundled to <home>/core/, with the watchdog program where the bundle looks for it (../programs/).
        await mkdir(join(home, "core"));
        await mkdir(join(home, "programs"));
        await copyFile(
          fileURLToPath(new URL("../programs/process-group-watchdog.mjs", import.meta.url)),
          join(home, "programs", "process-group-watchdog.mjs"),
        );
        const here = fileURLToPath(new URL(".", import.meta.url));
        const source = `
          import { ProcessGroupWatchdog } from ${JSON.stringify(join(here, "process-group-watchdog.ts"))};
          import { runProviderProcess } from ${JSON.stringify(join(here, "providers", "provider-process.ts"))};
          const watchdog = new ProcessGroupWatchdog();
          void runProviderProcess({
            executablePath: "/bin/sh",
            args: ["-c", "setsid /bin/sh -c 'echo $$ > tool.pid; exec sleep 300' & sleep 300"],
            cwd: process.argv[2],
            env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
            stdin: "",
            signal: new AbortController().signal,
            onStdoutLine: () => {},
            onSpawned: (pid, tag) => {
              watchdog.watch(pid, tag);
              console.log(JSON.stringify({ leader: pid, watchdog: watchdog.pid }));
            },
          });`;
        const program = join(home, "core", "stand-in-core.mjs");
        await writeFile(program, await bundleTestProgram(source, here));
        const core = spawn(process.execPath, [program, home], { stdio: ["ignore", "pipe", "inherit"] });
        processes.add(core.pid!);
        const announced = await new Promise<{ leader: number; watchdog: number }>((resolve, reject) => {
          let text = "";
          core.stdout.on("data", (chunk: Buffer) => {
            text += chunk.toString("utf8");
            if (text.includes("\n")) resolve(JSON.parse(text.slice(0, text.indexOf("\n"))));
          });
          core.on("exit", () => reject(new Error("the stand-in Core exited early")));
        });
        processes.add(announced.leader);
        processes.add(announced.watchdog);
        const tool = processes.add(await pidFromFile(join(home, "tool.pid")));
        // Out of the CLI's group: killing the group alone would leave it running.
        expect(readProcessEntry(tool)?.pgrp).toBe(tool);
        const bystander = spawn("sleep", ["300"], { env: { [PROCESS_TAG_VARIABLE]: newProcessTag() }, detached: true, stdio: "ignore" });
        processes.add(bystander.pid!);

        process.kill(core.pid!, "SIGKILL");
        expect(await waitFor(() => isGone(tool), 5_000)).toBe(true);
        expect(await waitFor(() => !groupAlive(announced.leader) && isGone(announced.watchdog), 5_000)).toBe(true);
        expect(isGone(bystander.pid!)).toBe(false);
      } finally {
        await processes.endAll();
        await rm(home, { recursive: true, force: true });
      }
    },
  );
});
