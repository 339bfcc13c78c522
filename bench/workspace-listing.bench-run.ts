// Prints median / p95 of `workspace.listFiles()` of a 10,000-file workspace from a page in real Chromium (through the
// extension, the native host and Core) against `find <workspace> -type f` on the same tree, interleaved in one run.
import { execFile } from "node:child_process";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { expect, it } from "vitest";
import { approvedSession, setUpE2e } from "../test/e2e/harness.js";
import { latencySummary, ms } from "./latency-summary.js";

const ROUNDS = Number.parseInt(process.env.BENCH_WORKSPACE_LIST_ROUNDS ?? "20", 10);
const FOLDERS = 100;
const FILES_PER_FOLDER = 100;
const run = promisify(execFile);

it("measures listFiles of a 10,000-file workspace through the whole chain against find", async () => {
  const environment = await setUpE2e({ startCore: true });
  try {
    const { page, workspace } = await approvedSession(environment);
    for (let folder = 0; folder < FOLDERS; folder += 1) {
      const dir = join(workspace.path, `folder-${String(folder).padStart(3, "0")}`);
      await mkdir(dir, { recursive: true });
      await Promise.all(Array.from({ length: FILES_PER_FOLDER }, (_, file) => writeFile(join(dir, `note-${file}.md`), "")));
    }
    const listFiles = () =>
      page.evaluate(async () => {
        const started = performance.now();
        const paths: string[] = await (window as any).session.workspace.listFiles();
        return { elapsed: performance.now() - started, count: paths.length };
      });
    const find = async () => {
      const started = performance.now();
      const { stdout } = await run("find", [workspace.path, "-type", "f", "-not", "-path", "*/.pedelec-runtime/*"], { maxBuffer: 64 << 20 });
      return { elapsed: performance.now() - started, count: stdout.split("\n").filter(Boolean).length };
    };
    // Warm-up: the page cache, the JIT, the route to Core.
    for (let index = 0; index < 3; index += 1) {
      await listFiles();
      await find();
    }
    const listed: number[] = [];
    const found: number[] = [];
    for (let round = 0; round < ROUNDS; round += 1) {
      const pedelec = await listFiles();
      const system = await find();
      expect(pedelec.count).toBe(FOLDERS * FILES_PER_FOLDER);
      expect(system.count).toBe(FOLDERS * FILES_PER_FOLDER);
      listed.push(pedelec.elapsed);
      found.push(system.elapsed);
    }
    const pedelec = latencySummary(listed);
    const system = latencySummary(found);
    console.log(
      `listFiles of ${FOLDERS * FILES_PER_FOLDER} files (${ROUNDS} rounds, alternating): page → extension → host → Core ${ms(pedelec.median)} ` +
        `(p95 ${ms(pedelec.p95)}), find ${ms(system.median)} (p95 ${ms(system.p95)}), ratio ${(pedelec.median / system.median).toFixed(2)}× (goal ≤ 3×)`,
    );
  } finally {
    await environment.close();
  }
});
