// Prints the median time from spawning Core (the way the native host starts it) to Core answering a ping on its
// socket, against `node -e 0` measured interleaved in the same run, and their ratio (the goal is at most 1.5x).
// Every Core start gets a fresh PEDELEC_HOME, so none finds a socket, sessions or keys left by another.
import { spawn } from "node:child_process";
import { access, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { it } from "vitest";
import { CoreConnection } from "@pedelec/core-client/core-client";
import { launchCoreDetached } from "@pedelec/core/core-launcher";
import { resolveCorePaths } from "@pedelec/core/core-paths";
import { latencySummary, ms } from "./latency-summary.js";

const RUNS = Number.parseInt(process.env.BENCH_CORE_START_RUNS ?? "15", 10);
const GOAL_RATIO = 1.5;
const START_DEADLINE_MS = 30_000;

/** Spawn → exit of a Node.js that does nothing: what any Node program pays before its first line runs. */
async function nodeDoingNothing(): Promise<number> {
  const started = performance.now();
  const code = await new Promise<number | null>((resolve, reject) => {
    const child = spawn(process.execPath, ["-e", "0"], { stdio: "ignore" });
    child.on("error", reject);
    child.on("close", resolve);
  });
  if (code !== 0) throw new Error(`node -e 0 exited with ${code}`);
  return performance.now() - started;
}

/**
 * One ping on a fresh connection; false while Core is not listening yet (or not answering). Looks for the socket file
 * first: a failed connect costs more, and this loop shares the machine with the Core it measures.
 */
async function pingOnce(socketPath: string): Promise<boolean> {
  if (!(await access(socketPath).then(() => true, () => false))) return false;
  const connection = await CoreConnection.open(socketPath).catch(() => undefined);
  if (!connection) return false;
  try {
    await connection.request("ping", {});
    return true;
  } catch {
    return false;
  } finally {
    connection.close();
  }
}

/** Spawn → first answered ping, retrying every millisecond so the figure is Core's, not a polling interval's. */
async function coreStart(): Promise<number> {
  const home = await mkdtemp(join(tmpdir(), "pedelec-bench-core-start-"));
  const paths = resolveCorePaths({ PEDELEC_HOME: home });
  let pid: number | undefined;
  try {
    const started = performance.now();
    pid = await launchCoreDetached(paths, { ...process.env, PEDELEC_HOME: home });
    while (!(await pingOnce(paths.socketPath))) {
      if (performance.now() - started > START_DEADLINE_MS) throw new Error(`Core did not answer within ${START_DEADLINE_MS} ms; see ${paths.logsDir}`);
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    return performance.now() - started;
  } finally {
    if (pid !== undefined) await stopCore(paths.socketPath, pid);
    await rm(home, { recursive: true, force: true });
  }
}

/** Asks Core to shut down and waits until its process is gone, so runs do not overlap. */
async function stopCore(socketPath: string, pid: number): Promise<void> {
  const connection = await CoreConnection.open(socketPath).catch(() => undefined);
  await connection?.request("shutdown", {}).catch(() => undefined);
  connection?.close();
  const deadline = performance.now() + START_DEADLINE_MS;
  for (;;) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    if (performance.now() > deadline) {
      process.kill(pid, "SIGKILL");
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

it("measures Core start → first ping against node -e 0", async () => {
  // One of each first, unmeasured: the first start of anything reads its files from disk.
  await nodeDoingNothing();
  await coreStart();
  const nodeTimes: number[] = [];
  const coreTimes: number[] = [];
  for (let index = 0; index < RUNS; index += 1) {
    // Alternating which goes first, so neither always runs right after the other's exit.
    if (index % 2 === 0) {
      nodeTimes.push(await nodeDoingNothing());
      coreTimes.push(await coreStart());
    } else {
      coreTimes.push(await coreStart());
      nodeTimes.push(await nodeDoingNothing());
    }
  }
  const node = latencySummary(nodeTimes);
  const core = latencySummary(coreTimes);
  const ratio = core.median / node.median;
  console.log(`node -e 0 (spawn → exit), ${nodeTimes.length} runs: median ${ms(node.median)}, p95 ${ms(node.p95)}`);
  console.log(`Core start (spawn → first answered ping), ${coreTimes.length} runs: median ${ms(core.median)}, p95 ${ms(core.p95)}`);
  console.log(`ratio Core / node -e 0: median ${ratio.toFixed(2)}x (goal ≤ ${GOAL_RATIO}x: ${ratio <= GOAL_RATIO ? "met" : "not met"})`);
});
