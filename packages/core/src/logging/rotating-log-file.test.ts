import { spawn } from "node:child_process";
import { mkdtemp, readdir, readFile, rm, stat, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { RotatingLogFile } from "./rotating-log-file.js";
import { bundleTestProgram } from "../testing/bundle-test-program.js";

let folder: string;
beforeEach(async () => {
  folder = await mkdtemp(join(tmpdir(), "pedelec-rotating-log-"));
});
afterEach(async () => {
  await rm(folder, { recursive: true, force: true });
});

/** `writer-<n> line <index>` padded to about 60 bytes, so the limits below are crossed many times. */
function numberedLine(writer: string, index: number): string {
  return `${JSON.stringify({ writer, index, padding: "x".repeat(24) })}\n`;
}

/** Every file of the log, oldest first (core.log.<keep> … core.log.1, core.log), and what else the folder holds. */
async function logFiles(): Promise<{ names: string[]; others: string[] }> {
  const all = await readdir(folder);
  const rotated = all
    .filter((name) => /^core\.log\.\d+$/.test(name))
    .sort((first, second) => Number(second.split(".").pop()) - Number(first.split(".").pop()));
  const names = [...rotated, ...(all.includes("core.log") ? ["core.log"] : [])];
  return { names, others: all.filter((name) => !names.includes(name)) };
}

async function linesOf(names: readonly string[]): Promise<string[]> {
  const texts = await Promise.all(names.map((name) => readFile(join(folder, name), "utf8")));
  return texts
    .join("")
    .split("\n")
    .filter((line) => line !== "");
}

describe("RotatingLogFile in one process", () => {
  it("rotates past the size limit, keeps the set number of old files, and loses no line at a rotation", async () => {
    const limits = { maxBytes: 1000, keep: 3 };
    const file = new RotatingLogFile(join(folder, "core.log"), limits);
    for (let index = 0; index < 200; index += 1) file.write(numberedLine("only", index));
    file.close();

    const { names, others } = await logFiles();
    expect(names).toEqual(["core.log.3", "core.log.2", "core.log.1", "core.log"]);
    expect(others).toEqual([]);
    for (const name of names.slice(0, 3)) expect((await stat(join(folder, name))).size).toBeGreaterThanOrEqual(limits.maxBytes);
    // What is kept is an unbroken run ending at the last line: every rotation boundary inside it lost nothing.
    const indexes = (await linesOf(names)).map((line) => (JSON.parse(line) as { index: number }).index);
    expect(indexes.at(-1)).toBe(199);
    expect(indexes).toEqual(Array.from({ length: indexes.length }, (_, offset) => 199 - indexes.length + 1 + offset));
    expect(indexes.length).toBeGreaterThan((3 * limits.maxBytes) / 60);
  });

  it("keeps every line when enough old files are kept", async () => {
    const file = new RotatingLogFile(join(folder, "core.log"), { maxBytes: 1000, keep: 100 });
    for (let index = 0; index < 500; index += 1) file.write(numberedLine("only", index));
    file.close();
    const { names } = await logFiles();
    expect(names.length).toBeGreaterThan(20);
    expect((await linesOf(names)).map((line) => (JSON.parse(line) as { index: number }).index)).toEqual(
      Array.from({ length: 500 }, (_, index) => index),
    );
  });

  it("creates the file 0600 and its folder 0700 when they are missing", async () => {
    const file = new RotatingLogFile(join(folder, "logs", "core.log"));
    file.write("{}\n");
    file.close();
    expect((await stat(join(folder, "logs"))).mode & 0o777).toBe(0o700);
    expect((await stat(join(folder, "logs", "core.log"))).mode & 0o777).toBe(0o600);
  });

  it("leaves rotating to the holder of a fresh rotation lock, and breaks a stale one", async () => {
    const lock = join(folder, ".core.log.rotating");
    await writeFile(lock, "");
    const file = new RotatingLogFile(join(folder, "core.log"), { maxBytes: 500, keep: 2 });
    for (let index = 0; index < 20; index += 1) file.write(numberedLine("only", index));
    // Another process holds the lock: this one writes on, past the limit, and rotates nothing.
    expect((await logFiles()).names).toEqual(["core.log"]);
    expect((await stat(join(folder, "core.log"))).size).toBeGreaterThan(1000);

    // A lock older than a rotation could take was left by a process that died holding it.
    const past = new Date(Date.now() - 60_000);
    await utimes(lock, past, past);
    file.write(numberedLine("only", 20));
    file.close();
    const { names, others } = await logFiles();
    expect(names).toEqual(["core.log.1"]);
    expect(others).toEqual([]);
    expect((await linesOf(names)).length).toBe(21);
  });

  it("reopens the file when it was removed under it", async () => {
    const file = new RotatingLogFile(join(folder, "core.log"));
    file.write('{"n":1}\n');
    await rm(join(folder, "core.log"));
    file.write('{"n":2}\n');
    file.close();
    expect(await readFile(join(folder, "core.log"), "utf8")).toBe('{"n":2}\n');
  });
});

// Two real processes write the same file as fast as they can, with a small limit, the way two native hosts (or a
// Core and a second one its lock refuses) share their log.
describe("RotatingLogFile shared by two processes", () => {
  let programs: string;
  let writerProgram: string;
  beforeAll(async () => {
    programs = await mkdtemp(join(tmpdir(), "pedelec-rotating-log-writer-"));
    writerProgram = join(programs, "writer.mjs");
    const bundled = await bundleTestProgram(
      `import { RotatingLogFile } from ${JSON.stringify(fileURLToPath(new URL("./rotating-log-file.ts", import.meta.url)))};
const [path, writer, count, maxBytes, keep] = process.argv.slice(2);
const file = new RotatingLogFile(path, { maxBytes: Number(maxBytes), keep: Number(keep) });
for (let index = 0; index < Number(count); index += 1) file.write(JSON.stringify({ writer, index, padding: "x".repeat(24) }) + "\\n");
file.close();`,
      programs,
    );
    await writeFile(writerProgram, bundled);
  });
  afterAll(async () => {
    await rm(programs, { recursive: true, force: true });
  });

  function runWriter(writer: string, count: number, maxBytes: number, keep: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [writerProgram, join(folder, "core.log"), writer, String(count), String(maxBytes), String(keep)], {
        stdio: ["ignore", "ignore", "pipe"],
      });
      let stderr = "";
      child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
      child.on("error", reject);
      child.on("close", (code) => (code === 0 ? resolve() : reject(new Error(`writer ${writer} exited with ${code}: ${stderr}`))));
    });
  }

  it("loses, splits and duplicates no line, and never shifts the files twice for one rotation", async () => {
    const count = 3000;
    await Promise.all([runWriter("a", count, 8192, 1000), runWriter("b", count, 8192, 1000)]);
    const { names, others } = await logFiles();
    expect(others).toEqual([]);
    expect(names.length).toBeGreaterThan(10);
    // Rotated files are numbered without gaps: a double shift would have skipped a number.
    expect(names.slice(0, -1)).toEqual(Array.from({ length: names.length - 1 }, (_, offset) => `core.log.${names.length - 1 - offset}`));
    for (const name of names.slice(0, -1)) expect((await stat(join(folder, name))).size).toBeGreaterThanOrEqual(8192);
    const entries = (await linesOf(names)).map((line) => JSON.parse(line) as { writer: string; index: number });
    for (const writer of ["a", "b"]) {
      const indexes = entries.filter((entry) => entry.writer === writer).map((entry) => entry.index);
      expect(indexes.length).toBe(count);
      expect(new Set(indexes).size).toBe(count);
    }
  });

  it("keeps no more old files than asked while both rotate", async () => {
    await Promise.all([runWriter("a", 2000, 4096, 2), runWriter("b", 2000, 4096, 2)]);
    const { names, others } = await logFiles();
    expect(names).toEqual(["core.log.2", "core.log.1", "core.log"]);
    expect(others).toEqual([]);
    // Whatever was kept is whole lines.
    for (const line of await linesOf(names)) expect(() => JSON.parse(line)).not.toThrow();
  });
});
