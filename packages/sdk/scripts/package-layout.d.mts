/** One published entry of the package (see package-layout.mjs). */
export interface PackageEntry {
  subpath: string;
  name: string;
  source: string;
  description: string;
}

export declare const bundleDirectory: string;
export declare const browserBundleFile: string;
export declare const externalModules: string[];
export declare const packageEntries: PackageEntry[];
export declare const packageName: string;
export declare function entrySpecifier(entry: PackageEntry): string;
