// Builds the static site into dist/: src/main.tsx bundled with React into one self-contained ESM file (app.js), plus
// index.html and the stylesheet.
import { copyFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { browserBundleBase, buildBrowserBundle } from "../../../scripts/browser-bundle.mjs";

const exampleRoot = new URL("../", import.meta.url);
const sdkSource = fileURLToPath(new URL("../../../packages/sdk/src/", import.meta.url));
const outputFolder = new URL("dist/", exampleRoot);
const STATIC_FILES = ["index.html", "style.css"];

/** The SDK's other entries, from source like the main one (browserBundleBase's plugin), so all share one Pedelec class. */
const sdkEntriesPlugin = {
  name: "pedelec-sdk-entries",
  setup(pluginBuild) {
    pluginBuild.onResolve({ filter: /^@kaoruisaac\/pedelec\/react$/ }, () => ({ path: join(sdkSource, "react/index.ts") }));
  },
};

// dist/ is exactly the site: nothing left over from an older build.
await rm(outputFolder, { recursive: true, force: true });

const base = browserBundleBase();
const result = await buildBrowserBundle({
  ...base,
  absWorkingDir: fileURLToPath(exampleRoot),
  entryPoints: ["src/main.tsx"],
  outfile: "dist/app.js",
  jsx: "automatic",
  // React checks this to leave out its development-only warnings.
  define: { "process.env.NODE_ENV": JSON.stringify("production") },
  plugins: [sdkEntriesPlugin, ...base.plugins],
});

for (const name of STATIC_FILES) await copyFile(new URL(name, exampleRoot), new URL(name, outputFolder));
const [outputPath, output] = Object.entries(result.metafile.outputs).find(([path]) => path.endsWith(".js"));
console.log(`${outputPath}: ${(output.bytes / 1024).toFixed(1)} KiB; copied ${STATIC_FILES.join(", ")}`);
