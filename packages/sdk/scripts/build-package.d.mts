/** Bytes one bundled package adds to the published modules. */
export interface BundledPackageSize {
  name: string;
  bytes: number;
  minifiedBytes: number;
}

/** What an application importing one entry loads, minified. */
export interface EntrySize {
  subpath: string;
  minifiedBytes: number;
  gzipBytes: number;
}

/** What buildPackage() wrote and measured. */
export interface PackageBuildSummary {
  directory: string;
  files: string[];
  bundledPackages: string[];
  sizes: {
    packages: BundledPackageSize[];
    entries: EntrySize[];
    browser: { minifiedBytes: number; gzipBytes: number };
  };
  flattenedTypes: string[];
  flattenChecks: number;
  /** rollup-plugin-dts's warnings, e.g. a public declaration using a type no entry exports. */
  declarationWarnings: string[];
}

export declare const defaultPackageRoot: string;

/** Builds dist/bundle and dist/pedelec.browser.js (see build-package.mjs). */
export declare function buildPackage(options?: { packageRoot?: string }): Promise<PackageBuildSummary>;
