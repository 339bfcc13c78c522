import type { BuildOptions } from "esbuild";

/** esbuild options for dist/pedelec.browser.js (see browser-bundle-options.mjs). */
export declare function browserBundleOptions(): BuildOptions;
