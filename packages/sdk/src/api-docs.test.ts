// docs/api is the reference TypeDoc writes from the doc comments of the published declarations (dist/bundle, what an
// application's editor shows too). This fails when a public declaration has no doc comment (TypeDoc's notDocumented
// validation, warnings as errors), and when docs/api is not what `npm run docs:api` writes from the current sources.
import { execFile } from "node:child_process";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildPackage } from "../scripts/build-package.mjs";

const packageRoot = fileURLToPath(new URL("..", import.meta.url));
const repoRoot = resolve(packageRoot, "../..");
const committedDocs = join(repoRoot, "docs/api");
const typedoc = join(repoRoot, "node_modules/typedoc/bin/typedoc");
const options = join(packageRoot, "typedoc.json");

interface TypedocRun {
  exitCode: number;
  output: string;
}

let work: string;
let validation: Promise<TypedocRun>;
let generation: Promise<TypedocRun>;

function runTypedoc(args: string[]): Promise<TypedocRun> {
  return new Promise((resolvePromise) => {
    execFile(process.execPath, [typedoc, "--options", options, ...args], { cwd: repoRoot, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      // Without colours, the warnings read as plain lines in a failure message.
      // biome-ignore lint/suspicious/noControlCharactersInRegex: the pattern matches the escape character that starts a colour code
      const output = `${stdout}${stderr}`.replace(/\u001b\[[0-9;]*m/g, "");
      resolvePromise({ exitCode: error === null ? 0 : typeof error.code === "number" ? error.code : 1, output });
    });
  });
}

async function listFiles(directory: string, root = directory): Promise<string[]> {
  const entries = await readdir(directory, { withFileTypes: true });
  const nested = await Promise.all(
    entries.map((entry) =>
      entry.isDirectory() ? listFiles(join(directory, entry.name), root) : [relative(root, join(directory, entry.name)).split("\\").join("/")],
    ),
  );
  return nested.flat().sort();
}

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), "pedelec-api-docs-"));
  await buildPackage();
  // Two TypeDoc runs side by side: one only validates (warnings fail it), one writes the pages to compare.
  validation = runTypedoc(["--emit", "none", "--treatWarningsAsErrors"]);
  generation = runTypedoc(["--out", work]);
}, 600_000);

afterAll(async () => {
  await Promise.all([validation, generation]);
  if (work !== undefined) await rm(work, { recursive: true, force: true });
});

describe("the API reference", () => {
  it("has a doc comment for every public declaration and member", { timeout: 180_000 }, async () => {
    const { exitCode, output } = await validation;
    const undocumented = output.split("\n").filter((line) => line.includes("does not have any documentation"));
    expect(undocumented, "public declarations without a doc comment").toEqual([]);
    expect(exitCode, output).toBe(0);
  });

  it("in docs/api is what `npm run docs:api` writes from the current sources", { timeout: 180_000 }, async () => {
    const { exitCode, output } = await generation;
    expect(exitCode, output).toBe(0);
    const generated = await listFiles(work);
    expect(generated).toContain("README.md");
    const committed = await listFiles(committedDocs).catch(() => []);
    expect(committed, "docs/api is out of date: run `npm run docs:api`").toEqual(generated);
    const stale: string[] = [];
    for (const file of generated) {
      const [fresh, kept] = await Promise.all([readFile(join(work, file), "utf8"), readFile(join(committedDocs, file), "utf8")]);
      if (fresh !== kept) stale.push(file);
    }
    expect(stale, "docs/api is out of date: run `npm run docs:api`").toEqual([]);
  });
});
