import { spawn } from "node:child_process";
import { afterEach, describe, expect, it } from "vitest";
import { ProcessGroupWatchdog } from "./process-group-watchdog.js";
import { groupAlive } from "./testing/process-group.js";

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
});
