// Builds the static site into dist/: src/main.ts bundled into one self-contained ESM file (app.js), plus
// index.html and the stylesheet.
import { copyFile, rm } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { browserBundleBase, buildBrowserBundle } from "../../../scripts/browser-bundle.mjs";

const exampleRoot = new URL("../", import.meta.url);
const outputFolder = new URL("dist/", exampleRoot);
const STATIC_FILES = ["index.html", "style.css"];

// dist/ is exactly the site: nothing left over from an older build.
await rm(outputFolder, { recursive: true, force: true });

const result = await buildBrowserBundle({
  ...browserBundleBase(),
  absWorkingDir: fileURLToPath(exampleRoot),
  entryPoints: ["src/main.ts"],
  outfile: "dist/app.js",
});

for (const name of STATIC_FILES) await copyFile(new URL(name, exampleRoot), new URL(name, outputFolder));
const [outputPath, output] = Object.entries(result.metafile.outputs).find(([path]) => path.endsWith(".js"));
console.log(`${outputPath}: ${(output.bytes / 1024).toFixed(1)} KiB; copied ${STATIC_FILES.join(", ")}`);
