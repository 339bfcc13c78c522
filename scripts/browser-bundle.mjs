// esbuild setup shared by every browser bundle (SDK, extension, demo): workspace packages are taken from their
// TypeScript sources, so bundling never depends on build order, and no bare import may be left in the output.
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const repoRoot = fileURLToPath(new URL("..", import.meta.url));

/** `@pedelec/<package>/<file>` → packages/<package>/src/<file>.ts, `@kaoruisaac/pedelec` → the SDK's entry. */
export const workspaceSourcePlugin = {
  name: "pedelec-workspace-source",
  setup(pluginBuild) {
    pluginBuild.onResolve({ filter: /^@pedelec\/[a-z-]+\/[a-z0-9-]+$/ }, (args) => {
      const [, packageName, file] = args.path.split("/");
      return { path: join(repoRoot, "packages", packageName, "src", `${file}.ts`) };
    });
    pluginBuild.onResolve({ filter: /^@kaoruisaac\/pedelec$/ }, () => ({ path: join(repoRoot, "packages/sdk/src/index.ts") }));
  },
};

/**
 * zod's namespace re-exports every message locale (about 260 KiB); Pedelec only uses the English default, which zod
 * imports directly from locales/en.js, so the all-locales index is replaced by one that has English only.
 */
export const englishOnlyZodLocalesPlugin = {
  name: "zod-english-locale-only",
  setup(pluginBuild) {
    pluginBuild.onResolve({ filter: /\/locales\/index\.js$/ }, (args) => {
      if (!/[\\/]node_modules[\\/]zod[\\/]/.test(args.importer)) return undefined;
      return { path: join(dirname(args.importer), args.path), namespace: "zod-locales" };
    });
    pluginBuild.onLoad({ filter: /.*/, namespace: "zod-locales" }, (args) => ({
      contents: `export { default as en } from ${JSON.stringify(join(dirname(args.path), "en.js"))};`,
      resolveDir: dirname(args.path),
      loader: "js",
    }));
  },
};

/** Options every browser bundle starts from; callers add entry points and output paths. */
export function browserBundleBase() {
  return {
    bundle: true,
    format: "esm",
    platform: "browser",
    target: "es2022",
    sourcemap: true,
    minify: true,
    legalComments: "none",
    logLevel: "warning",
    plugins: [workspaceSourcePlugin, englishOnlyZodLocalesPlugin],
  };
}

/** Builds, then fails the build if any output still has an import a browser could not resolve without an import map. */
export async function buildBrowserBundle(options) {
  const result = await build({ ...options, metafile: true });
  for (const [outputPath, output] of Object.entries(result.metafile.outputs)) {
    if (!outputPath.endsWith(".js")) continue;
    const leftover = output.imports.filter((entry) => !entry.path.startsWith("./") && !entry.path.startsWith("../"));
    if (leftover.length > 0) {
      throw new Error(`${outputPath} still imports: ${leftover.map((entry) => entry.path).join(", ")}`);
    }
  }
  return result;
}
