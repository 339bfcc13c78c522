// Bundles the SDK into one ESM file a plain <script type="module"> can import (no bare imports left).
import { buildBrowserBundle } from "../../../scripts/browser-bundle.mjs";
import { browserBundleOptions } from "./browser-bundle-options.mjs";

const result = await buildBrowserBundle(browserBundleOptions());
const [outputPath, output] = Object.entries(result.metafile.outputs).find(([path]) => path.endsWith(".js"));
console.log(`${outputPath}: ${(output.bytes / 1024).toFixed(1)} KiB`);
