import type { BuildOptions, BuildResult, Plugin } from "esbuild";

/** Takes `@pedelec/<package>/<file>` and `@kaoruisaac/pedelec` from the workspace's TypeScript sources. */
export declare const workspaceSourcePlugin: Plugin;

/** Replaces zod's all-locales index with one that has English only. */
export declare const englishOnlyZodLocalesPlugin: Plugin;

/** Options every browser bundle starts from (see browser-bundle.mjs); callers add entry points and output paths. */
export declare function browserBundleBase(): BuildOptions;

/** Builds, then fails the build if any output still has an import a browser could not resolve without an import map. */
export declare function buildBrowserBundle(options: BuildOptions): Promise<BuildResult<BuildOptions & { metafile: true }>>;
