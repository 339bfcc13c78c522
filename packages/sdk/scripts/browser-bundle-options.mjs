// esbuild options for the self-contained browser build, shared by scripts/bundle.mjs and the bundle test.
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const packageRoot = fileURLToPath(new URL("..", import.meta.url));
const protocolSource = fileURLToPath(new URL("../../protocol/src/", import.meta.url));

/**
 * Resolves `@pedelec/protocol/<name>` to the protocol's TypeScript source, so the bundle does not depend on
 * the protocol package having been built first.
 */
const protocolSourcePlugin = {
  name: "pedelec-protocol-source",
  setup(build) {
    build.onResolve({ filter: /^@pedelec\/protocol\/[a-z0-9-]+$/ }, (args) => ({
      path: `${protocolSource}${args.path.slice("@pedelec/protocol/".length)}.ts`,
    }));
  },
};

/**
 * zod's namespace re-exports every message locale (about 260 KiB); the SDK only ever uses the English default,
 * which zod imports directly from locales/en.js, so the all-locales index is replaced by one that has English only.
 */
const englishOnlyZodLocalesPlugin = {
  name: "zod-english-locale-only",
  setup(build) {
    build.onResolve({ filter: /\/locales\/index\.js$/ }, (args) => {
      if (!/[\\/]node_modules[\\/]zod[\\/]/.test(args.importer)) return undefined;
      return { path: join(dirname(args.importer), args.path), namespace: "zod-locales" };
    });
    build.onLoad({ filter: /.*/, namespace: "zod-locales" }, (args) => ({
      contents: `export { default as en } from ${JSON.stringify(join(dirname(args.path), "en.js"))};`,
      resolveDir: dirname(args.path),
      loader: "js",
    }));
  },
};

/** @returns {import("esbuild").BuildOptions} */
export function browserBundleOptions() {
  return {
    absWorkingDir: packageRoot,
    entryPoints: ["src/index.ts"],
    outfile: "dist/pedelec.browser.js",
    bundle: true,
    format: "esm",
    platform: "browser",
    target: "es2022",
    sourcemap: true,
    minify: true,
    legalComments: "none",
    logLevel: "warning",
    plugins: [protocolSourcePlugin, englishOnlyZodLocalesPlugin],
  };
}
