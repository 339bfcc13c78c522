// Builds the unpacked extension into dist/: the two entry points bundled with esbuild, plus the static files.
// @pedelec/protocol is bundled from its TypeScript source, so this does not depend on the protocol's build.
import { copyFile, mkdir, readdir, rm } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const packageDir = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const outDir = join(packageDir, "dist");
const protocolSource = resolve(packageDir, "../protocol/src");

// tsc writes its declarations to dist/types (and its build info next to it); everything else here is ours to replace.
const keptByTsc = new Set(["types", "tsconfig.tsbuildinfo"]);

/** @type {import("esbuild").Plugin} */
const protocolSourcePlugin = {
  name: "pedelec-protocol-source",
  setup(pluginBuild) {
    pluginBuild.onResolve({ filter: /^@pedelec\/protocol\/[a-z0-9-]+$/ }, (args) => ({
      path: join(protocolSource, `${args.path.slice("@pedelec/protocol/".length)}.ts`),
    }));
  },
};

await mkdir(outDir, { recursive: true });
for (const entry of await readdir(outDir)) {
  if (!keptByTsc.has(entry)) await rm(join(outDir, entry), { recursive: true, force: true });
}

await build({
  absWorkingDir: packageDir,
  entryPoints: { "service-worker": "src/service-worker.ts", popup: "src/popup.ts" },
  outdir: outDir,
  bundle: true,
  format: "esm",
  platform: "browser",
  target: "chrome120",
  sourcemap: "linked",
  legalComments: "none",
  // zod's namespace import keeps all of it (locales included); minifying keeps worker start-up parsing cheap.
  minify: true,
  logLevel: "warning",
  plugins: [protocolSourcePlugin],
});

await copyFile(join(packageDir, "static/manifest.json"), join(outDir, "manifest.json"));
await copyFile(join(packageDir, "static/popup.html"), join(outDir, "popup.html"));

console.log(`extension bundled into ${outDir}`);
