// The time-of-check / time-of-use race of the module-graph pre-check: a writer keeps swapping the entry between a
// module that imports a workspace file and one that imports an outside file. Through the runner (bubblewrap) the
// outside content never shows; with raw Deno and the same pre-check it does.
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeAll, expect, it } from "vitest";
import { locateDeno } from "./deno-binary.js";
import { sandboxDenoRunArgs, sandboxEnvironment } from "./deno-command.js";
import { ModuleGraphChecker } from "./module-graph-check.js";
import { detectSandboxWall } from "./sandbox-wall.js";
import { ScriptRunner } from "./script-runner.js";

const SECRET = `RACE-SECRET-${process.pid}-${Date.now()}`;
const CHECKED_RUNS = 25;
const MAX_ATTEMPTS = 400;

let denoPath: string;
let writer: ChildProcess | undefined;

beforeAll(async () => {
  denoPath = await locateDeno();
});

/** Stops the writer and waits until it is gone, so nothing writes into a folder being removed. */
async function stopWriter(): Promise<void> {
  const child = writer;
  writer = undefined;
  if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.kill("SIGKILL");
  await gone;
}

afterEach(stopWriter);

async function raceFixture() {
  const root = await mkdtemp(join(tmpdir(), "pedelec-race-"));
  const ws = join(root, "ws");
  const outside = join(root, "outside");
  await mkdir(ws);
  await mkdir(outside);
  const secretPath = join(outside, "secret.txt");
  await writeFile(secretPath, SECRET);
  await writeFile(join(ws, "safe.txt"), "SAFE");
  const good = `import text from "./safe.txt" with { type: "text" };\nconsole.log(text);\n`;
  const evil = `import text from ${JSON.stringify(secretPath)} with { type: "text" };\nconsole.log(text);\n`;
  return { root, ws, good, evil };
}

/** A separate process that swaps main.ts between the two versions as fast as it can (atomic renames). */
async function startWriter(ws: string, good: string, evil: string): Promise<ChildProcess> {
  const program = `
    const { writeFileSync, renameSync } = require("node:fs");
    const [ws, good, evil] = process.argv.slice(1);
    let index = 0;
    writeFileSync(ws + "/main.ts", good);
    process.stdout.write("ready\\n");
    for (;;) {
      const temporary = ws + "/.swap-" + (index % 2);
      writeFileSync(temporary, index % 2 === 0 ? evil : good);
      renameSync(temporary, ws + "/main.ts");
      index += 1;
    }`;
  const child = spawn(process.execPath, ["-e", program, ws, good, evil], { stdio: ["ignore", "pipe", "inherit"] });
  await new Promise<void>((resolve, reject) => {
    const deadline = setTimeout(() => reject(new Error("the writer did not start")), 10_000);
    child.stdout?.once("data", () => {
      clearTimeout(deadline);
      resolve();
    });
  });
  return child;
}

it(`never shows outside content through the runner while the entry is swapped (${CHECKED_RUNS} checked runs)`, async () => {
  const { root, ws, good, evil } = await raceFixture();
  const runner = new ScriptRunner({ denoPath, wall: await detectSandboxWall(), privateDir: join(root, "private"), hostEnv: process.env });
  writer = await startWriter(ws, good, evil);
  let checked = 0;
  let refused = 0;
  let loadedSwapped = 0;
  let attempts = 0;
  while (checked < CHECKED_RUNS && attempts < MAX_ATTEMPTS) {
    attempts += 1;
    try {
      const result = await runner.run({
        runId: `race-${attempts}`,
        threadId: "race",
        workspaceRoot: ws,
        access: "sandbox",
        entry: "main.ts",
        timeoutMs: 15_000,
      });
      checked += 1;
      expect(result.stdout).not.toContain(SECRET);
      expect(result.stderr).not.toContain(SECRET);
      // The swapped module was loaded after the check, and its outside import found nothing inside the sandbox.
      if (result.exitCode !== 0) {
        expect(result.stderr).toMatch(/Module not found|No such file/);
        loadedSwapped += 1;
      } else {
        expect(result.stdout).toBe("SAFE\n");
      }
    } catch (error) {
      expect((error as { code?: string }).code).toBe("DENO_ENTRY_INVALID");
      refused += 1;
    }
  }
  console.log(
    `through the runner: ${attempts} attempts, ${refused} refused by the pre-check, ${checked} ran, ${loadedSwapped} of those loaded the swapped module (outside content shown: 0)`,
  );
  await stopWriter();
  expect(checked).toBe(CHECKED_RUNS);
  // The race was really run: some checked runs loaded the swapped module.
  expect(loadedSwapped).toBeGreaterThanOrEqual(1);
  await rm(root, { recursive: true, force: true });
}, 240_000);

it("leaks outside content with raw Deno under the same pre-check and writer (the wall is what holds)", async () => {
  const { root, ws, good, evil } = await raceFixture();
  const privateDir = join(root, "private");
  await mkdir(privateDir);
  const importMapPath = join(privateDir, "import-map.json");
  await writeFile(importMapPath, JSON.stringify({ imports: {} }));
  const checker = new ModuleGraphChecker();
  writer = await startWriter(ws, good, evil);
  let checked = 0;
  let leaks = 0;
  let attempts = 0;
  while (checked < CHECKED_RUNS && attempts < MAX_ATTEMPTS) {
    attempts += 1;
    const entryPath = join(ws, "main.ts");
    try {
      await checker.check({
        denoPath,
        denoDir: join(privateDir, "deno-dir"),
        realWorkspace: ws,
        entryPath,
        importMapPath,
        workspaceModulePath: join(privateDir, "none.js"),
        importMapKey: `attempt-${attempts}`,
      });
    } catch {
      continue;
    }
    checked += 1;
    const stdout = await new Promise<string>((resolve) => {
      execFile(
        denoPath,
        sandboxDenoRunArgs({ realWorkspace: ws, importMapPath, entryPath, args: [], heapMiB: 256 }),
        { cwd: ws, env: sandboxEnvironment(join(privateDir, "deno-dir")) },
        (_error, output) => resolve(output),
      );
    });
    if (stdout.includes(SECRET)) leaks += 1;
  }
  console.log(`raw Deno (no bubblewrap): ${checked} runs passed the pre-check, ${leaks} printed the outside file`);
  await stopWriter();
  expect(checked).toBe(CHECKED_RUNS);
  expect(leaks).toBeGreaterThanOrEqual(1);
  await rm(root, { recursive: true, force: true });
}, 240_000);
