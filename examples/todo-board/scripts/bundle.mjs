// Builds the static site into dist/: src/main.ts bundled into one self-contained ESM file (app.js), plus
// index.html and the stylesheet. The SDK and the protocol are taken from their TypeScript sources, so this
// does not depend on those packages having been built first.
import { copyFile, rm } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const exampleRoot = new URL("../", import.meta.url);
const sdkEntry = new URL("../../packages/sdk/src/index.ts", exampleRoot);
const protocolSource = new URL("../../packages/protocol/src/", exampleRoot);
const outputFolder = new URL("dist/", exampleRoot);
const STATIC_FILES = ["index.html", "style.css"];

/** Maps the workspace packages to their sources; everything else resolves as usual (zod from node_modules). */
const workspaceSourcePlugin = {
  name: "workspace-source",
  setup(pluginBuild) {
    pluginBuild.onResolve({ filter: /^@kaoruisaac\/pedelec$/ }, () => ({ path: fileURLToPath(sdkEntry) }));
    pluginBuild.onResolve({ filter: /^@pedelec\/protocol\/[a-z0-9-]+$/ }, (args) => ({
      path: fileURLToPath(new URL(`${args.path.slice("@pedelec/protocol/".length)}.ts`, protocolSource)),
    }));
  },
};

// dist/ is exactly the site: nothing left over from an older build.
await rm(outputFolder, { recursive: true, force: true });

const result = await build({
  absWorkingDir: fileURLToPath(exampleRoot),
  entryPoints: ["src/main.ts"],
  outfile: "dist/app.js",
  bundle: true,
  format: "esm",
  platform: "browser",
  target: "es2022",
  sourcemap: true,
  minify: true,
  legalComments: "none",
  logLevel: "warning",
  metafile: true,
  plugins: [workspaceSourcePlugin],
});

// A bare import left in the bundle would fail in the browser with no import map: refuse to ship it.
const [outputPath, output] = Object.entries(result.metafile.outputs).find(([path]) => path.endsWith(".js"));
const leftover = output.imports.map((entry) => entry.path);
if (leftover.length > 0) {
  console.error(`${outputPath} still imports: ${leftover.join(", ")}`);
  process.exit(1);
}

for (const name of STATIC_FILES) await copyFile(new URL(name, exampleRoot), new URL(name, outputFolder));
console.log(`${outputPath}: ${(output.bytes / 1024).toFixed(1)} KiB; copied ${STATIC_FILES.join(", ")}`);
