import { constants } from "node:fs";
import { access, stat } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { PedelecError } from "@pedelec/protocol/pedelec-error";

/** The npm package that carries the Deno binary for each platform we ship to (they come with `deno@2.9.6`). */
const PLATFORM_PACKAGES: Readonly<Record<string, string>> = {
  "linux-x64": "@deno/linux-x64-glibc",
  "linux-arm64": "@deno/linux-arm64-glibc",
  "darwin-arm64": "@deno/darwin-arm64",
  "darwin-x64": "@deno/darwin-x64",
  "win32-x64": "@deno/win32-x64",
};

const REINSTALL_HINT = "reinstall Pedelec (`npm ci` in its folder) so that the pinned `deno` package and its platform binary are present";

/** Where to look, so tests can point the lookup at another platform or resolver. */
export interface DenoLookup {
  platform: NodeJS.Platform;
  arch: string;
  /** Resolves a package file the way `require.resolve` does from this package. */
  resolve: (request: string) => string;
}

/**
 * The pinned Deno binary: resolve `@deno/<platform>/package.json` with createRequire from this package and return the
 * sibling `deno` (deno.exe) path, after checking it is executable. Never the `.bin` shim (a Node wrapper that costs
 * ~20 ms per start), never a host deno/node/bun. Missing → PedelecError DENO_UNAVAILABLE.
 */
export async function locateDeno(): Promise<string> {
  return locateDenoWith({ platform: process.platform, arch: process.arch, resolve: createRequire(import.meta.url).resolve });
}

export async function locateDenoWith(lookup: DenoLookup): Promise<string> {
  const packageName = PLATFORM_PACKAGES[`${lookup.platform}-${lookup.arch}`];
  if (packageName === undefined) {
    throw new PedelecError(
      "DENO_UNAVAILABLE",
      `no pinned Deno build exists for ${lookup.platform}-${lookup.arch}; supported: ${Object.keys(PLATFORM_PACKAGES).join(", ")}`,
    );
  }
  let manifest: string;
  try {
    manifest = lookup.resolve(`${packageName}/package.json`);
  } catch {
    throw new PedelecError("DENO_UNAVAILABLE", `the package ${packageName} is not installed; ${REINSTALL_HINT}`);
  }
  const binary = join(dirname(manifest), lookup.platform === "win32" ? "deno.exe" : "deno");
  try {
    const info = await stat(binary);
    if (!info.isFile()) throw new Error("not a regular file");
    await access(binary, constants.X_OK);
  } catch (error) {
    throw new PedelecError(
      "DENO_UNAVAILABLE",
      `the Deno binary ${binary} is missing or not executable (${(error as Error).message}); ${REINSTALL_HINT}`,
    );
  }
  return binary;
}
