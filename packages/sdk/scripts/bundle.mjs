// Bundles the SDK into one ESM file a plain <script type="module"> can import (no bare imports left).
import { build } from "esbuild";
import { browserBundleOptions } from "./browser-bundle-options.mjs";

const result = await build({ ...browserBundleOptions(), metafile: true });
const [outputPath, output] = Object.entries(result.metafile.outputs).find(([path]) => path.endsWith(".js"));
const leftover = output.imports.map((entry) => entry.path);
if (leftover.length > 0) {
  console.error(`${outputPath} still imports: ${leftover.join(", ")}`);
  process.exit(1);
}
console.log(`${outputPath}: ${(output.bytes / 1024).toFixed(1)} KiB`);
