import { randomBytes } from "node:crypto";
import type { Stats } from "node:fs";
import { lstat, mkdir, realpath, rename, unlink } from "node:fs/promises";
import { join } from "node:path";
import { PedelecError } from "@pedelec/protocol/pedelec-error";

/** Pedelec's own folder in every workspace (SPEC §6); scripts reach parts of it through `pedelec:workspace`. */
export const RUNTIME_FOLDER = ".pedelec-runtime";
export const RUNTIME_SUBFOLDERS = ["assets", "logs", "skills", "tmp"] as const;
export type RuntimeSubfolder = (typeof RUNTIME_SUBFOLDERS)[number];

/** One damaged entry Core put right: what sat where a folder belongs, and what became of it. */
export interface RuntimeFolderRepair {
  /** The folder that was damaged (absolute). */
  folder: string;
  found: "symlink" | "file" | "other";
  /** A symlink is removed (never followed); anything else is renamed beside it, so nothing anybody wrote is lost. */
  action: "removed" | "moved-aside";
  movedTo?: string;
}

const invalid = (message: string): PedelecError => new PedelecError("WORKSPACE_PATH_INVALID", message);

async function lstatOrUndefined(path: string): Promise<Stats | undefined> {
  try {
    return await lstat(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw invalid(`${path} cannot be inspected: ${(error as Error).message}`);
  }
}

/** mkdir of one level, never recursive: a symlink at `path` makes it fail instead of creating anything at its target. */
async function makeFolder(path: string): Promise<void> {
  await mkdir(path, { mode: 0o700 }).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== "EEXIST") throw invalid(`${path} cannot be created: ${error.message}`);
  });
}

function kindOf(info: Stats): RuntimeFolderRepair["found"] {
  if (info.isSymbolicLink()) return "symlink";
  return info.isFile() ? "file" : "other";
}

/**
 * Makes `<workspace>/.pedelec-runtime/{assets,logs,skills,tmp}` real folders, checking every level with lstat before
 * creating anything below it, so nothing is ever created through a symlink.
 *
 * - `.pedelec-runtime` itself missing → created. A symlink or anything but a folder there → WORKSPACE_PATH_INVALID:
 *   it sits in the user's folder, so Pedelec neither follows it nor removes it; the message says what to remove.
 * - A sub-folder missing → created. Damaged (a symlink or a file where the folder belongs, left by an agent or a Full
 *   Access script) → repaired: a symlink is unlinked (its target is never touched), anything else is renamed to
 *   `<name>.damaged-<UTC stamp>-<random>` beside it, then the folder is made again.
 *
 * Returns the runtime folder (under the workspace's real path). Called when a session is prepared, before each run and
 * before each asset operation, so damage made while a session lives is put right on next use.
 */
export async function ensureRuntimeFolders(
  workspaceRoot: string,
  onRepair: (repair: RuntimeFolderRepair) => void = () => undefined,
): Promise<string> {
  let realWorkspace: string;
  try {
    realWorkspace = await realpath(workspaceRoot);
  } catch (error) {
    throw invalid(`the workspace ${workspaceRoot} cannot be resolved: ${(error as Error).message}`);
  }
  const runtime = join(realWorkspace, RUNTIME_FOLDER);
  let info = await lstatOrUndefined(runtime);
  if (info === undefined) {
    await makeFolder(runtime);
    info = await lstatOrUndefined(runtime);
  }
  if (info === undefined || !info.isDirectory()) {
    const what = info === undefined ? "missing" : info.isSymbolicLink() ? "a symlink" : "not a folder";
    throw invalid(
      `${runtime} is ${what}; it is Pedelec's own folder and must be a real folder inside the workspace. ` +
        `Remove it (\`rm '${runtime}'\`) and Pedelec creates it again`,
    );
  }
  for (const name of RUNTIME_SUBFOLDERS) {
    const folder = join(runtime, name);
    const found = await lstatOrUndefined(folder);
    if (found?.isDirectory()) continue;
    if (found !== undefined) await setAside(folder, found, onRepair);
    await makeFolder(folder);
  }
  // Something may have swapped a level while we worked: the result must still be the real folders we meant.
  const resolved = await realpath(runtime).catch(() => undefined);
  if (resolved !== runtime) throw invalid(`${runtime} changed into a link while Pedelec prepared it`);
  for (const name of RUNTIME_SUBFOLDERS) {
    const folder = join(runtime, name);
    if (!(await lstatOrUndefined(folder))?.isDirectory()) throw invalid(`${folder} is not a folder after Pedelec prepared it`);
  }
  return runtime;
}

async function setAside(folder: string, found: Stats, onRepair: (repair: RuntimeFolderRepair) => void): Promise<void> {
  const kind = kindOf(found);
  try {
    if (kind === "symlink") {
      await unlink(folder);
      onRepair({ folder, found: kind, action: "removed" });
      return;
    }
    const stamp = new Date().toISOString().replace(/[-:]/g, "").replace(".", "");
    const movedTo = `${folder}.damaged-${stamp}-${randomBytes(4).toString("hex")}`;
    await rename(folder, movedTo);
    onRepair({ folder, found: kind, action: "moved-aside", movedTo });
  } catch (error) {
    // Gone meanwhile is fine: the folder is made next.
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw invalid(`${folder} is damaged and cannot be repaired: ${(error as Error).message}`);
  }
}
