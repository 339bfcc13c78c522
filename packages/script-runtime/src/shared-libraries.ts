import { execFile } from "node:child_process";
import { isAbsolute } from "node:path";
import { PedelecError } from "@pedelec/protocol/pedelec-error";

const found = new Map<string, Promise<string[]>>();

/**
 * The shared libraries and the dynamic loader a binary needs, as `ldd` lists them, so the sandbox can bind exactly
 * those and nothing else of the host. Asked once per binary.
 */
export function sharedLibrariesOf(binary: string): Promise<string[]> {
  let libraries = found.get(binary);
  if (libraries === undefined) {
    libraries = listSharedLibraries(binary);
    found.set(binary, libraries);
    libraries.catch(() => found.delete(binary));
  }
  return libraries;
}

function listSharedLibraries(binary: string): Promise<string[]> {
  return new Promise((resolve, reject) => {
    execFile("ldd", [binary], { env: { PATH: "/usr/bin:/bin", LC_ALL: "C" }, timeout: 10_000 }, (error, stdout) => {
      if (error !== null) {
        reject(new PedelecError("DENO_UNAVAILABLE", `could not list the libraries the Deno binary needs (ldd ${binary}): ${error.message}`));
        return;
      }
      try {
        resolve(parseLdd(stdout));
      } catch (parseError) {
        reject(parseError);
      }
    });
  });
}

/** Parses `ldd` output: `libc.so.6 => /lib/…/libc.so.6 (0x…)` and `/lib64/ld-linux-x86-64.so.2 (0x…)` lines. */
export function parseLdd(output: string): string[] {
  const paths = new Set<string>();
  for (const rawLine of output.split("\n")) {
    const line = rawLine.trim();
    if (line === "") continue;
    if (line.includes("=> not found")) {
      throw new PedelecError("DENO_UNAVAILABLE", `the Deno binary needs a library this system lacks: ${line}`);
    }
    const arrow = /=>\s*(\S+)\s+\(0x[0-9a-f]+\)$/.exec(line);
    const direct = /^(\S+)\s+\(0x[0-9a-f]+\)$/.exec(line);
    const path = arrow?.[1] ?? direct?.[1];
    // linux-vdso.so.1 is provided by the kernel and has no file.
    if (path !== undefined && isAbsolute(path)) paths.add(path);
  }
  if (paths.size === 0) throw new PedelecError("DENO_UNAVAILABLE", "ldd listed no libraries for the Deno binary");
  return [...paths];
}
