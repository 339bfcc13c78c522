import { spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bundleTestProgram } from "@pedelec/core/testing/bundle-test-program";

// A child process writes through writeOutput exactly as pedelec-cli does, and the parent reads its pipe in small, slow
// sips, so the writer meets a full pipe more than once.
let folder: string;
let writer: string;
beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), "pedelec-fd-output-"));
  writer = join(folder, "writer.mjs");
  const bundled = await bundleTestProgram(
    `import { writeOutput } from ${JSON.stringify(fileURLToPath(new URL("./fd-output.ts", import.meta.url)))};
// Creating process.stdout puts a pipe in non-blocking mode, where a full pipe refuses a write with EAGAIN.
if (process.argv[3] === "non-blocking") void process.stdout.fd;
writeOutput(1, "é".repeat(Number(process.argv[2])) + "\\n");
writeOutput(2, "done\\n");`,
    folder,
  );
  await writeFile(writer, bundled);
});
afterAll(async () => {
  await rm(folder, { recursive: true, force: true });
});

function runWriter(characters: number, mode: "blocking" | "non-blocking"): Promise<{ stdout: Buffer; stderr: string; code: number | null }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [writer, String(characters), mode], { stdio: ["ignore", "pipe", "pipe"] });
    const chunks: Buffer[] = [];
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => {
      chunks.push(chunk);
      child.stdout.pause();
      setTimeout(() => child.stdout.resume(), 2);
    });
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ stdout: Buffer.concat(chunks), stderr, code }));
  });
}

describe("writeOutput", () => {
  it.each(["blocking", "non-blocking"] as const)(
    "delivers a result much larger than a pipe holds, whole and in order, to a slow reader (%s pipe)",
    async (mode) => {
      const result = await runWriter(1_000_000, mode);
      expect(result.code).toBe(0);
      expect(result.stderr).toBe("done\n");
      expect(result.stdout.length).toBe(2_000_001);
      expect(result.stdout.toString("utf8")).toBe(`${"é".repeat(1_000_000)}\n`);
    },
  );
});
