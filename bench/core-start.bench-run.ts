// Prints the median time from spawning Core (the way the native host starts it) to Core answering a ping on its
// socket, against `node -e 0` measured interleaved in the same run with the same clean environment, and their ratio
// (the goal is at most 1.5x).
// Two kinds of start, interleaved: in a home Core has used before (its key, settings and session store there, as when the
// native host starts Core for a browser that has used Pedelec; the goal is about this one), and the first start in a
// new home (which also creates the key).
import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { it } from "vitest";
import { CoreConnection } from "@pedelec/core-client/core-client";
import { waitForCore } from "@pedelec/core-client/core-launch";
import { launchCoreDetached } from "@pedelec/core/core-launcher";
import { resolveCorePaths } from "@pedelec/core/core-paths";
import { latencySummary, ms } from "./latency-summary.js";

/** Starts of each kind: a start is some 25 ms, and with 15 the ratio's median moved by ±0.1 from run to run. */
const RUNS = Number.parseInt(process.env.BENCH_CORE_START_RUNS ?? "41", 10);
/**
 * Both sides start with the same clean environment, as Chrome starts the native host on a user's desktop: variables
 * such as NODE_EXTRA_CA_CERTS (set on some machines) make every Node start read files first, which adds the same
 * milliseconds to both sides and hides the difference being measured.
 */
const CLEAN_ENV = { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "" };
const GOAL_RATIO = 1.5;
const START_DEADLINE_MS = 30_000;

/** Spawn → exit of a Node.js that does nothing: what any Node program pays before its first line runs. */
async function nodeDoingNothing(): Promise<number> {
  const started = performance.now();
  const code = await new Promise<number | null>((resolve, reject) => {
    const child = spawn(process.execPath, ["-e", "0"], { env: CLEAN_ENV, stdio: "ignore" });
    child.on("error", reject);
    child.on("close", resolve);
  });
  if (code !== 0) throw new Error(`node -e 0 exited with ${code}`);
  return performance.now() - started;
}

/**
 * Spawn → first answered ping, waited for with the client the CLI uses (`waitForCore`): it tries again as soon as the
 * socket's folder changes, and otherwise after 1 ms, doubling up to 10 ms.
 */
async function coreStart(home: string): Promise<number> {
  const paths = resolveCorePaths({ PEDELEC_HOME: home });
  let pid: number | undefined;
  try {
    const started = performance.now();
    pid = await launchCoreDetached(paths, { ...CLEAN_ENV, PEDELEC_HOME: home });
    if (!(await waitForCore(paths, START_DEADLINE_MS))) throw new Error(`Core did not answer within ${START_DEADLINE_MS} ms; see ${paths.logsDir}`);
    return performance.now() - started;
  } finally {
    if (pid !== undefined) await stopCore(paths.socketPath, pid);
  }
}

/** Core's first start in a home of its own, which is removed afterwards. */
async function coreStartInNewHome(): Promise<number> {
  const home = await mkdtemp(join(tmpdir(), "pedelec-bench-core-start-"));
  try {
    return await coreStart(home);
  } finally {
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
  const usedHome = await mkdtemp(join(tmpdir(), "pedelec-bench-core-start-used-"));
  try {
    // One of each first, unmeasured: the first start of anything reads its files from disk, and this one makes the
    // used home's key, settings and session store.
    await nodeDoingNothing();
    await coreStart(usedHome);
    const times = { node: [] as number[], used: [] as number[], fresh: [] as number[] };
    const measures: [keyof typeof times, () => Promise<number>][] = [
      ["node", nodeDoingNothing],
      ["used", () => coreStart(usedHome)],
      ["fresh", coreStartInNewHome],
    ];
    for (let index = 0; index < RUNS; index += 1) {
      // Rotating which goes first, so none always runs right after another's exit.
      for (let step = 0; step < measures.length; step += 1) {
        const [name, measure] = measures[(index + step) % measures.length]!;
        times[name].push(await measure());
      }
    }
    const node = latencySummary(times.node);
    const used = latencySummary(times.used);
    const fresh = latencySummary(times.fresh);
    const ratio = used.median / node.median;
    console.log(`node -e 0 (spawn → exit), ${times.node.length} runs: median ${ms(node.median)}, p95 ${ms(node.p95)}`);
    console.log(`Core start in a used home (spawn → first answered ping), ${times.used.length} runs: median ${ms(used.median)}, p95 ${ms(used.p95)}`);
    console.log(
      `Core's first start in a new home, ${times.fresh.length} runs: median ${ms(fresh.median)}, p95 ${ms(fresh.p95)} (${(fresh.median / node.median).toFixed(2)}x)`,
    );
    console.log(
      `ratio Core (used home) / node -e 0: median ${ratio.toFixed(2)}x (goal ≤ ${GOAL_RATIO}x: ${ratio <= GOAL_RATIO ? "met" : "not met"})`,
    );
  } finally {
    await rm(usedHome, { recursive: true, force: true });
  }
});
