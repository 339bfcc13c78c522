import { join } from "node:path";
import { RUNTIME_MOUNT_FDS } from "./runtime-mounts.js";
import { isInside } from "./workspace-paths.js";

/** Where the Deno binary appears inside the sandbox: a neutral path, so `Deno.execPath()` names no host folder. */
export const SANDBOX_DENO_PATH = "/opt/pedelec-runtime/deno";
/** Deno's cache inside the sandbox: on the per-run tmpfs, so nothing is shared between runs. */
export const SANDBOX_DENO_DIR = "/tmp/.pedelec-deno-dir";

/** The environment of every sandboxed Deno (and of the pre-check): nothing of the caller's. */
export function sandboxEnvironment(denoDir: string): Record<string, string> {
  return { DENO_DIR: denoDir, NO_COLOR: "1", DENO_NO_UPDATE_CHECK: "1" };
}

export interface DenoRunInput {
  realWorkspace: string;
  importMapPath: string;
  entryPath: string;
  args: readonly string[];
  heapMiB: number;
}

/**
 * `deno run` for a sandboxed script: nothing fetched, no config file, lockfile or node_modules, read and write the
 * workspace only, every other permission denied, no prompt. Arguments come after the entry, so they only ever reach
 * `Deno.args`.
 */
export function sandboxDenoRunArgs(input: DenoRunInput): string[] {
  return [
    "run",
    "--no-prompt",
    "--no-remote",
    "--cached-only",
    "--no-npm",
    "--no-config",
    "--no-lock",
    "--node-modules-dir=none",
    "--quiet",
    `--v8-flags=--max-old-space-size=${input.heapMiB}`,
    `--allow-read=${input.realWorkspace}`,
    `--allow-write=${input.realWorkspace}`,
    "--deny-net",
    "--deny-env",
    "--deny-run",
    "--deny-ffi",
    "--deny-sys",
    "--deny-import",
    `--import-map=${input.importMapPath}`,
    input.entryPath,
    ...input.args,
  ];
}

/** `deno run` for Full Access: every permission, remote modules allowed, the import map still Pedelec's. */
export function fullAccessDenoRunArgs(input: Omit<DenoRunInput, "heapMiB" | "realWorkspace">): string[] {
  return ["run", "--no-prompt", "-A", `--import-map=${input.importMapPath}`, input.entryPath, ...input.args];
}

export interface BubblewrapInput extends DenoRunInput {
  bubblewrap: string;
  denoPath: string;
  /** Shared libraries and the dynamic loader the binary needs (from ldd). */
  libraries: readonly string[];
  /** The per-run private folder holding the merged import map and the generated module. */
  runFolder: string;
  tmpDir: string;
  /** `<workspace>/.pedelec-runtime`; the child holds it, its assets and its tmp open at RUNTIME_MOUNT_FDS. */
  runtimeFolder: string;
}

/**
 * The bubblewrap command around a sandboxed run. Inside, only the Deno binary, its libraries, /proc, /dev, an empty
 * /tmp, the workspace (read-write) and the run's private folder (read-only) exist: a symlink to an outside file
 * resolves to nothing, and a module swapped in after the pre-check cannot import anything outside. Pedelec's
 * `.pedelec-runtime` is read-only in there except its `assets` and `tmp` (mounted from descriptors Core opened and
 * checked, see openRuntimeMounts): a script cannot rewrite run logs or skills, and cannot remove, rename or replace
 * any of the mounted folders themselves (a mount point is busy). No
 * `--new-session`: the sandbox stays in the process group the runner kills (the runner's own spawn already gives it
 * a new session without a controlling terminal).
 */
export function bubblewrapArgs(input: BubblewrapInput): string[] {
  const innerDeno =
    isInside(SANDBOX_DENO_PATH, input.realWorkspace) || isInside(input.realWorkspace, SANDBOX_DENO_PATH) ? input.denoPath : SANDBOX_DENO_PATH;
  const binds: string[] = ["--ro-bind", input.denoPath, innerDeno];
  for (const library of input.libraries) binds.push("--ro-bind", library, library);
  return [
    "--unshare-all",
    "--die-with-parent",
    "--cap-drop",
    "ALL",
    ...binds,
    "--proc",
    "/proc",
    "--dev",
    "/dev",
    "--tmpfs",
    "/tmp",
    "--dir",
    SANDBOX_DENO_DIR,
    "--bind",
    input.realWorkspace,
    input.realWorkspace,
    "--ro-bind-fd",
    String(RUNTIME_MOUNT_FDS.runtime),
    input.runtimeFolder,
    "--bind-fd",
    String(RUNTIME_MOUNT_FDS.assets),
    join(input.runtimeFolder, "assets"),
    "--bind-fd",
    String(RUNTIME_MOUNT_FDS.tmp),
    join(input.runtimeFolder, "tmp"),
    "--ro-bind",
    input.runFolder,
    input.runFolder,
    "--chdir",
    input.realWorkspace,
    "--clearenv",
    ...Object.entries(sandboxEnvironment(SANDBOX_DENO_DIR)).flatMap(([name, value]) => ["--setenv", name, value]),
    "--setenv",
    "TMPDIR",
    input.tmpDir,
    "--",
    innerDeno,
    ...sandboxDenoRunArgs(input),
  ];
}
