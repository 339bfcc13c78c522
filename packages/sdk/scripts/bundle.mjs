// Builds everything npm publishes of the SDK: the one-file browser bundle (dist/pedelec.browser.js) and the
// per-entry modules and declarations in dist/bundle. Run by the root build and before `npm pack`.
import { relative } from "node:path";
import { buildPackage } from "./build-package.mjs";

const summary = await buildPackage();
const kib = (bytes) => `${(bytes / 1024).toFixed(1)} KiB`;
for (const item of summary.sizes.entries) {
  console.log(`${item.subpath}: ${kib(item.minifiedBytes)} minified, ${kib(item.gzipBytes)} gzip (with what it imports)`);
}
console.log(`./browser: ${kib(summary.sizes.browser.minifiedBytes)}, ${kib(summary.sizes.browser.gzipBytes)} gzip`);
console.log(`bundled in: ${summary.sizes.packages.map((item) => `${item.name} ${kib(item.minifiedBytes)}`).join(", ")} (minified)`);
console.log(`${relative(process.cwd(), summary.directory)}: ${summary.files.length} files`);
for (const warning of summary.declarationWarnings) console.warn(`declarations: ${warning}`);
