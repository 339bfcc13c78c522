#!/usr/bin/env node
// Installs the agent CLIs the end-to-end tests run for real (test/real-clis/package-lock.json pins them), unless the
// pinned versions are there already. Part of the test set-up only: `npm start` never runs it, so the product's install
// stays lean (the three CLIs are about 1.2 GB on disk).
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const folder = fileURLToPath(new URL("../test/real-clis", import.meta.url));
const lock = JSON.parse(readFileSync(join(folder, "package-lock.json"), "utf8"));
const pinned = Object.keys(lock.packages[""].dependencies);

function installedVersion(name) {
  try {
    return JSON.parse(readFileSync(join(folder, "node_modules", name, "package.json"), "utf8")).version;
  } catch {
    return null;
  }
}

const stale = pinned.filter((name) => installedVersion(name) !== lock.packages[`node_modules/${name}`].version);
const bins = ["claude", "codex", "opencode"].filter((bin) => !existsSync(join(folder, "node_modules", ".bin", bin)));
if (stale.length === 0 && bins.length === 0) process.exit(0);

console.log(
  `Installing the pinned agent CLIs for the tests (${pinned.map((name) => `${name}@${lock.packages[`node_modules/${name}`].version}`).join(", ")})…`,
);
const started = Date.now();
const npm = process.platform === "win32" ? "npm.cmd" : "npm";
// Not `npm ci`: the lock lists each CLI's platform packages for other systems (OpenCode's for macOS and Windows, say)
// that the registry these machines reach does not serve, so `npm ci` refuses the lock as out of sync. `npm install
// --no-save` installs the locked versions of what there is, skips the optional packages it cannot have, and leaves the
// lock as it is.
const result = spawnSync(npm, ["install", "--no-save", "--no-audit", "--no-fund", "--loglevel=error"], { cwd: folder, stdio: "inherit" });
if (result.status !== 0) {
  console.error(`npm install in ${folder} failed (exit ${result.status ?? result.signal}); the real-agent tests need these CLIs.`);
  process.exit(1);
}
console.log(`Installed in ${((Date.now() - started) / 1000).toFixed(1)} s.`);
