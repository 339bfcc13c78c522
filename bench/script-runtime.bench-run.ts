// Prints median / p95 of a hello-world script (with one local import) run four ways, interleaved in one run: the
// agent's whole command (`pedelec-ts-runtime` → Core's socket → the sandbox, output streamed back), ScriptRunner.run
// in the sandbox with the module-graph pre-check cached, the same with a cold pre-check, and raw `deno run` with the
// same Deno flags (no bubblewrap, no pre-check, no private files, no run log). Node's own start-up is printed too,
// since the command pays it once per call.
import { spawn } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { locateDeno } from "@pedelec/script-runtime/deno-binary";
import { sandboxDenoRunArgs, sandboxEnvironment } from "@pedelec/script-runtime/deno-command";
import { detectSandboxWall } from "@pedelec/script-runtime/sandbox-wall";
import { ScriptRunner } from "@pedelec/script-runtime/script-runner";
import { CoreConnection } from "@pedelec/core-client/core-client";
import { startCore } from "@pedelec/core/core-daemon";
import { capabilityOfHangingAgent } from "@pedelec/core/testing/agent-capability";
import { repoRoot } from "../test/e2e/harness.js";
import { expect, it } from "vitest";
import { latencySummary, ms } from "./latency-summary.js";

const RUNS = Number.parseInt(process.env.BENCH_SCRIPT_RUNS ?? "50", 10);

function runRaw(denoPath: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(denoPath, args, { cwd, env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.on("error", reject);
    child.on("close", () => resolve(stdout));
  });
}

it("measures ScriptRunner.run against raw deno run", async () => {
  const root = await mkdtemp(join(tmpdir(), "pedelec-bench-runtime-"));
  const ws = join(root, "ws");
  await mkdir(ws);
  await writeFile(join(ws, "greeting.ts"), `export const greeting: string = "hello";\n`);
  await writeFile(join(ws, "hello.ts"), `import { greeting } from "./greeting.ts";\nconsole.log(greeting, "world");\n`);
  const rawMap = join(root, "raw-import-map.json");
  await writeFile(rawMap, JSON.stringify({ imports: {} }));
  const denoPath = await locateDeno();
  const wall = await detectSandboxWall();
  const cached = new ScriptRunner({ denoPath, wall, privateDir: join(root, "private-cached"), hostEnv: {} });
  const rawArgs = sandboxDenoRunArgs({ realWorkspace: ws, importMapPath: rawMap, entryPath: join(ws, "hello.ts"), args: [], heapMiB: 512 });
  const rawEnv = sandboxEnvironment(join(root, "raw-deno-dir"));

  // The agent's command against a real Core, inside a turn of the stand-in agent (for the thread capability).
  const home = join(root, "home");
  const core = await startCore({
    ...process.env,
    PEDELEC_HOME: home,
    PEDELEC_PROVIDER_PATH: join(repoRoot, "test/stand-ins/claude"),
    CLAUDE_CONFIG_DIR: join(root, "claude"),
  });
  const page = await CoreConnection.open(core.paths.socketPath);
  const origin = "http://127.0.0.1:4000";
  const session = await page.request("createSession", { provider: "claude" }, origin);
  await page.request("sendText", { sessionId: session.sessionId, turnId: "bench", text: "hang" }, origin);
  const capability = await capabilityOfHangingAgent(session.workspace.path);
  await writeFile(join(session.workspace.path, "greeting.ts"), `export const greeting: string = "hello";\n`);
  await writeFile(join(session.workspace.path, "hello.ts"), `import { greeting } from "./greeting.ts";\nconsole.log(greeting, "world");\n`);
  const command = [join(repoRoot, "packages/cli/dist/agent-commands/pedelec-ts-runtime.mjs"), "--thread-id", session.sessionId, "run", "hello.ts"];
  const commandEnv = { PATH: process.env.PATH ?? "", PEDELEC_HOME: home, PEDELEC_THREAD_CAPABILITY: capability };
  const runCommand = () => runRaw(process.execPath, command, session.workspace.path, commandEnv);
  const nodeAlone = () => runRaw(process.execPath, ["-e", ""], root, commandEnv);

  // One warm-up of each, so the first sample does not pay for the page cache and DENO_DIR.
  expect(await runCommand()).toBe("hello world\n");
  await cached.run({ runId: "warm-up", threadId: "bench", workspaceRoot: ws, access: "sandbox", entry: "hello.ts" });
  await runRaw(denoPath, rawArgs, ws, rawEnv);

  const samples = { command: [] as number[], node: [] as number[], cached: [] as number[], cold: [] as number[], raw: [] as number[] };
  for (let index = 0; index < RUNS; index += 1) {
    let started = performance.now();
    expect(await runCommand()).toBe("hello world\n");
    samples.command.push(performance.now() - started);

    started = performance.now();
    await nodeAlone();
    samples.node.push(performance.now() - started);

    started = performance.now();
    const cachedResult = await cached.run({ runId: `cached-${index}`, threadId: "bench", workspaceRoot: ws, access: "sandbox", entry: "hello.ts" });
    samples.cached.push(performance.now() - started);
    expect(cachedResult.stdout).toBe("hello world\n");

    // A new runner has an empty verified-graph cache: this run pays for `deno info`.
    const cold = new ScriptRunner({ denoPath, wall, privateDir: join(root, "private-cold"), hostEnv: {} });
    started = performance.now();
    const coldResult = await cold.run({ runId: `cold-${index}`, threadId: "bench", workspaceRoot: ws, access: "sandbox", entry: "hello.ts" });
    samples.cold.push(performance.now() - started);
    expect(coldResult.stdout).toBe("hello world\n");

    started = performance.now();
    const rawOutput = await runRaw(denoPath, rawArgs, ws, rawEnv);
    samples.raw.push(performance.now() - started);
    expect(rawOutput).toBe("hello world\n");
  }
  const raw = latencySummary(samples.raw);
  const cachedSummary = latencySummary(samples.cached);
  const coldSummary = latencySummary(samples.cold);
  const commandSummary = latencySummary(samples.command);
  const nodeSummary = latencySummary(samples.node);
  console.log(`script runtime, ${RUNS} runs each (interleaved):`);
  console.log(`  raw deno run (same flags, no wall):       median ${ms(raw.median)}, p95 ${ms(raw.p95)}`);
  console.log(
    `  pedelec-ts-runtime through Core:          median ${ms(commandSummary.median)}, p95 ${ms(commandSummary.p95)}, ratio ${(commandSummary.median / raw.median).toFixed(2)}×`,
  );
  console.log(`    of which Node.js start-up alone:        median ${ms(nodeSummary.median)}, p95 ${ms(nodeSummary.p95)}`);
  console.log(
    `  ScriptRunner.run, pre-check cached:       median ${ms(cachedSummary.median)}, p95 ${ms(cachedSummary.p95)}, ratio ${(cachedSummary.median / raw.median).toFixed(2)}×`,
  );
  console.log(
    `  ScriptRunner.run, cold deno info check:   median ${ms(coldSummary.median)}, p95 ${ms(coldSummary.p95)}, ratio ${(coldSummary.median / raw.median).toFixed(2)}×`,
  );
  page.close();
  await core.stop();
  await rm(root, { recursive: true, force: true });
});
