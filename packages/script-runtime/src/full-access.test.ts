// Full Access runs: the host environment, subprocesses and the network work; every process the run started is gone
// afterwards, including one that left the process group.
import { readdirSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { locateDeno } from "./deno-binary.js";
import { detectSandboxWall } from "./sandbox-wall.js";
import { ScriptRunner } from "./script-runner.js";

let root: string;
let runner: ScriptRunner;
let server: Server;
let serverUrl: string;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "pedelec-full-"));
  server = createServer((_request, response) => response.end("from the local server"));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  serverUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  runner = new ScriptRunner({
    denoPath: await locateDeno(),
    wall: await detectSandboxWall(),
    privateDir: join(root, "private"),
    hostEnv: { ...process.env, PEDELEC_FULL_ACCESS_PROBE: "host-value" },
    limits: { pollMs: 50 },
  });
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await rm(root, { recursive: true, force: true });
});

/** Pids of live (non-zombie) processes whose command line contains `marker`. */
function processesWith(marker: string): number[] {
  const found: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const commandLine = readFileSync(`/proc/${name}/cmdline`, "utf8");
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      if (commandLine.includes(marker) && stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z") found.push(Number(name));
    } catch {
      // Gone while we looked.
    }
  }
  return found;
}

/** Waits until no live process carries `marker`, or fails after the deadline. */
async function expectNoneLeft(marker: string, deadlineMs = 3_000): Promise<void> {
  const until = Date.now() + deadlineMs;
  while (processesWith(marker).length > 0) {
    if (Date.now() > until) throw new Error(`processes still running: ${processesWith(marker).join(", ")}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** A `sleep` duration no other process uses, so /proc can be searched for it. */
function uniqueSleep(): string {
  return `300.${process.pid}${Math.floor(Math.random() * 1e6)}`;
}

async function workspace(): Promise<string> {
  return mkdtemp(join(root, "ws-"));
}

it("keeps the host environment, runs subprocesses and reaches the network", async () => {
  const result = await runner.run({
    runId: "full-basics",
    threadId: "t",
    workspaceRoot: await workspace(),
    access: "full",
    source: [
      `console.log(Deno.env.get("PEDELEC_FULL_ACCESS_PROBE"));`,
      `const output = await new Deno.Command("sh", { args: ["-c", "echo from-a-subprocess"] }).output();`,
      `console.log(new TextDecoder().decode(output.stdout).trim());`,
      `console.log(await (await fetch(${JSON.stringify(serverUrl)})).text());`,
      `console.log(Deno.hostname().length > 0);`,
    ].join("\n"),
  });
  expect(result.exitCode, result.stderr).toBe(0);
  expect(result.stdout).toBe("host-value\nfrom-a-subprocess\nfrom the local server\ntrue\n");
  expect(result.walls).toEqual([]);
  expect(result.access).toBe("full");
  expect(result.processTreeCleanupError).toBeUndefined();
});

it("kills children and grandchildren on cancel", async () => {
  const marker = uniqueSleep();
  const controller = new AbortController();
  const result = await runner.run({
    runId: "full-cancel",
    threadId: "t",
    workspaceRoot: await workspace(),
    access: "full",
    source: `new Deno.Command("sh", { args: ["-c", "sleep ${marker} & sleep ${marker}"] }).spawn(); console.log("spawned"); await new Promise(() => setInterval(() => {}, 1000));`,
    signal: controller.signal,
    onOutput: () => {
      // Let the shell start both sleeps before cancelling.
      const poll = setInterval(() => {
        if (processesWith(marker).length >= 2) {
          clearInterval(poll);
          controller.abort("stop");
        }
      }, 20);
    },
  });
  expect(result.termination).toBe("cancelled");
  expect(result.processTreeCleanupError).toBeUndefined();
  await expectNoneLeft(marker);
});

it("kills children and grandchildren on timeout", async () => {
  const marker = uniqueSleep();
  const result = await runner.run({
    runId: "full-timeout",
    threadId: "t",
    workspaceRoot: await workspace(),
    access: "full",
    source: `new Deno.Command("sh", { args: ["-c", "sleep ${marker} & sleep ${marker}"] }).spawn(); await new Promise(() => setInterval(() => {}, 1000));`,
    timeoutMs: 1_500,
  });
  expect(result.termination).toBe("timeout");
  expect(result.timedOut).toBe(true);
  await expectNoneLeft(marker);
});

it("kills the children left behind when the script exits by itself", async () => {
  const marker = uniqueSleep();
  const result = await runner.run({
    runId: "full-exit",
    threadId: "t",
    workspaceRoot: await workspace(),
    access: "full",
    source: `const child = new Deno.Command("sh", { args: ["-c", "sleep ${marker} & sleep ${marker}"] }).spawn(); child.unref(); await new Promise((resolve) => setTimeout(resolve, 500));`,
  });
  expect(result.termination).toBe("exited");
  expect(result.exitCode).toBe(0);
  await expectNoneLeft(marker);
});

it("reports and kills a process that left the group with setsid", async () => {
  const marker = uniqueSleep();
  const controller = new AbortController();
  const result = await runner.run({
    runId: "full-setsid",
    threadId: "t",
    workspaceRoot: await workspace(),
    access: "full",
    source: `new Deno.Command("setsid", { args: ["sleep", "${marker}"], stdout: "null", stderr: "null" }).spawn(); console.log("spawned"); await new Promise(() => setInterval(() => {}, 1000));`,
    signal: controller.signal,
    onOutput: () => {
      // Cancel once the escaped sleep has been running for several polls, so the runner has noted it.
      const poll = setInterval(() => {
        if (processesWith(marker).length >= 1) {
          clearInterval(poll);
          setTimeout(() => controller.abort("stop"), 300);
        }
      }, 20);
    },
  });
  expect(result.termination).toBe("cancelled");
  expect(result.processTreeCleanupError).toMatch(/^1 process left the run's process group: \d+ \(sleep\) — killed$/);
  await expectNoneLeft(marker);
});
