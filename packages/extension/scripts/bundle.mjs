// Builds the unpacked extension into dist/: the three entry points bundled with esbuild, plus the static files.
import { copyFile, mkdir, readdir, rm } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { browserBundleBase, buildBrowserBundle } from "../../../scripts/browser-bundle.mjs";

const packageDir = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const outDir = join(packageDir, "dist");

// tsc writes its declarations to dist/types (and its build info next to it); everything else here is ours to replace.
const keptByTsc = new Set(["types", "tsconfig.tsbuildinfo"]);

await mkdir(outDir, { recursive: true });
for (const entry of await readdir(outDir)) {
  if (!keptByTsc.has(entry)) await rm(join(outDir, entry), { recursive: true, force: true });
}

await buildBrowserBundle({
  ...browserBundleBase(),
  absWorkingDir: packageDir,
  entryPoints: { "service-worker": "src/service-worker.ts", popup: "src/popup.ts", options: "src/options.ts" },
  outdir: outDir,
  target: "chrome120",
  sourcemap: "linked",
});

await copyFile(join(packageDir, "static/manifest.json"), join(outDir, "manifest.json"));
for (const page of ["popup.html", "options.html"]) await copyFile(join(packageDir, "static", page), join(outDir, page));

console.log(`extension bundled into ${outDir}`);
