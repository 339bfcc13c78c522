// esbuild options for the SDK's self-contained browser build, shared by scripts/bundle.mjs and the bundle test.
import { fileURLToPath } from "node:url";
import { browserBundleBase } from "../../../scripts/browser-bundle.mjs";

const packageRoot = fileURLToPath(new URL("..", import.meta.url));

/** @returns {import("esbuild").BuildOptions} */
export function browserBundleOptions() {
  return {
    ...browserBundleBase(),
    absWorkingDir: packageRoot,
    entryPoints: ["src/index.ts"],
    outfile: "dist/pedelec.browser.js",
    // The map stays beside the bundle for debugging here but is not published, so the bundle must not point at it.
    sourcemap: "external",
  };
}
