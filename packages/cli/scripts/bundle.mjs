// Bundles the agent-facing commands into one file each. Agents run them for every tool call and script, and Node
// loading a few hundred separate modules costs more than the work itself; one minified file loads in a fraction.
import { build } from "esbuild";
import { fileURLToPath } from "node:url";

const packageDir = fileURLToPath(new URL("..", import.meta.url));
const result = await build({
  absWorkingDir: packageDir,
  entryPoints: { "pedelec-cli": "dist/pedelec-cli-entry.js", "pedelec-ts-runtime": "dist/pedelec-ts-runtime-entry.js" },
  outdir: "dist/agent-commands",
  outExtension: { ".js": ".mjs" },
  bundle: true,
  minify: true,
  platform: "node",
  target: "node20",
  format: "esm",
  metafile: true,
  logLevel: "warning",
});
for (const [path, output] of Object.entries(result.metafile.outputs)) console.log(`${path}: ${(output.bytes / 1024).toFixed(1)} KiB`);
