// Bundles the control panel's page (src/control-panel/ui, plain TypeScript and DOM) into dist/control-panel/app.js,
// with its stylesheet as app.css. Core serves both from there behind the panel's secret (panel-ui-files.ts).
import { copyFile, mkdir } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { browserBundleBase, buildBrowserBundle } from "../../../scripts/browser-bundle.mjs";

export async function bundleControlPanel() {
  const packageDir = fileURLToPath(new URL("..", import.meta.url));
  const outDir = join(packageDir, "dist", "control-panel");
  await mkdir(outDir, { recursive: true });
  await buildBrowserBundle({
    ...browserBundleBase(),
    absWorkingDir: packageDir,
    entryPoints: { app: "src/control-panel/ui/main.ts" },
    outdir: outDir,
    target: "chrome120",
    // The page's CSP loads scripts from the panel only; a source map would be one more file to serve.
    sourcemap: false,
  });
  await copyFile(join(packageDir, "src/control-panel/ui/panel.css"), join(outDir, "app.css"));
  console.log(`control panel bundled into ${outDir}`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await bundleControlPanel();
