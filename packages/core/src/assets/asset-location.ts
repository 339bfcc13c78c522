import { lstat, mkdir, realpath } from "node:fs/promises";
import type { Stats } from "node:fs";
import { join } from "node:path";
import { assetPathProblem } from "@pedelec/protocol/assets";
import type { ErrorCode } from "@pedelec/protocol/error-codes";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { ensureRuntimeFolders } from "@pedelec/script-runtime/runtime-folders";
import { isInside } from "../workspace-policy.js";
import { RUNTIME_DIR_NAME } from "../workspace.js";

/** Names Pedelec keeps for itself inside the assets folder (temporary uploads); never listed, never addressable. */
export const RESERVED_NAME_PREFIX = ".pedelec-";

export function isReservedName(name: string): boolean {
  return name.toLowerCase().startsWith(RESERVED_NAME_PREFIX);
}

/**
 * The real path of `<workspace>/.pedelec-runtime/assets`. Both folders must be real folders, not symlinks: the agent
 * can write in the workspace, and a symlink there would send page files anywhere on the machine. `failure` is the code
 * of the operation that needs the folder (ASSET_UPLOAD_FAILED, ASSET_READ_FAILED, ASSET_LIST_FAILED).
 */
export async function assetsRoot(workspacePath: string, failure: ErrorCode): Promise<string> {
  // Pedelec's folders are put right first when something outside Core damaged them (a file or a symlink where
  // `assets` belongs), so one bad moment does not fail every later asset request.
  await ensureRuntimeFolders(workspacePath).catch((error: unknown) => {
    throw new PedelecError(failure, `the workspace's assets folder is not usable: ${(error as Error).message}`);
  });
  let current = workspacePath;
  for (const name of [RUNTIME_DIR_NAME, "assets"]) {
    current = join(current, name);
    const stats = await lstat(current).catch((error: NodeJS.ErrnoException) => {
      throw new PedelecError(failure, `the workspace's assets folder is not usable: ${error.code ?? error.message}`);
    });
    if (!stats.isDirectory()) {
      throw new PedelecError(
        failure,
        `the workspace's ${RUNTIME_DIR_NAME}/assets is not a folder${stats.isSymbolicLink() ? " (it is a symlink)" : ""}`,
      );
    }
  }
  return current;
}

/**
 * The real path of `<workspace>/.pedelec-runtime/assets` when both are real folders now, else null. Unlike
 * assetsRoot it creates and repairs nothing: for a look at the folder that must leave the workspace as it is.
 */
export async function existingAssetsRoot(workspacePath: string): Promise<string | null> {
  let current = workspacePath;
  for (const name of [RUNTIME_DIR_NAME, "assets"]) {
    current = join(current, name);
    const stats = await lstat(current).catch(() => null);
    if (stats === null || !stats.isDirectory()) return null;
  }
  return current;
}

/** The segments of an asset path that passed the shared path rule; anything else is ASSET_PATH_INVALID. */
export function assetSegments(assetPath: string): string[] {
  const problem = assetPathProblem(assetPath);
  if (problem !== null) throw new PedelecError("ASSET_PATH_INVALID", `asset path ${problem}`);
  return assetPath.slice(1).split("/");
}

async function lstatOrNull(path: string): Promise<Stats | null> {
  try {
    return await lstat(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return null;
    throw error;
  }
}

function symlinkRefusal(assetPath: string, prefix: string): PedelecError {
  return new PedelecError("ASSET_PATH_INVALID", `asset path ${assetPath} goes through the symlink ${prefix}, which Pedelec does not follow`);
}

export interface ExistingAsset {
  /** Absolute path on disk. */
  absolutePath: string;
  stats: Stats;
}

/**
 * The regular file at `assetPath` under `root`, walking one segment at a time with lstat so that no symlink is ever
 * followed. Missing → ASSET_NOT_FOUND; a folder or another non-file → ASSET_NOT_FILE; a symlink → ASSET_PATH_INVALID.
 */
export async function findAsset(root: string, assetPath: string): Promise<ExistingAsset> {
  const segments = assetSegments(assetPath);
  let current = root;
  for (const [index, segment] of segments.entries()) {
    current = join(current, segment);
    const shown = `/${segments.slice(0, index + 1).join("/")}`;
    const stats = await lstatOrNull(current);
    if (stats === null) throw new PedelecError("ASSET_NOT_FOUND", `no asset at ${assetPath}`);
    if (stats.isSymbolicLink()) throw symlinkRefusal(assetPath, shown);
    const isLast = index === segments.length - 1;
    if (!isLast && !stats.isDirectory()) throw new PedelecError("ASSET_NOT_FOUND", `no asset at ${assetPath}: ${shown} is not a folder`);
    if (isLast && !stats.isFile()) {
      throw new PedelecError("ASSET_NOT_FILE", `${assetPath} is ${stats.isDirectory() ? "a folder" : "not a regular file"}`);
    }
    if (isLast) {
      await requireInside(root, current, "ASSET_PATH_INVALID");
      return { absolutePath: current, stats };
    }
  }
  // assetSegments never yields an empty list.
  throw new PedelecError("ASSET_PATH_INVALID", `asset path ${assetPath} names no file`);
}

/**
 * Where an upload to `assetPath` lands, checking every existing level with lstat: folders on the way must be real
 * folders (a symlink → ASSET_PATH_INVALID, a file → ASSET_PATH_INVALID), the target may be missing or a regular file
 * (a folder or other non-file → ASSET_NOT_FILE). With `create`, missing folders are made (0700), one level at a time,
 * so nothing is ever created through a symlink.
 */
export async function uploadTarget(root: string, assetPath: string, create: boolean): Promise<string> {
  const segments = assetSegments(assetPath);
  let current = root;
  for (const [index, segment] of segments.entries()) {
    current = join(current, segment);
    const shown = `/${segments.slice(0, index + 1).join("/")}`;
    const isLast = index === segments.length - 1;
    let stats = await lstatOrNull(current);
    if (stats === null && !isLast) {
      if (!create) return join(current, ...segments.slice(index + 1));
      await mkdir(current, { mode: 0o700 }).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== "EEXIST") throw error;
      });
      stats = await lstat(current);
    }
    if (stats === null) break;
    if (stats.isSymbolicLink()) throw symlinkRefusal(assetPath, shown);
    if (!isLast && !stats.isDirectory()) {
      throw new PedelecError("ASSET_PATH_INVALID", `asset path ${assetPath} needs ${shown} to be a folder, but it is a file`);
    }
    if (isLast && !stats.isFile()) {
      throw new PedelecError(
        "ASSET_NOT_FILE",
        `${assetPath} is ${stats.isDirectory() ? "a folder" : "not a regular file"}; only files can be replaced`,
      );
    }
  }
  if (create) await requireInside(root, join(current, ".."), "ASSET_PATH_INVALID");
  return current;
}

/** Belt and braces after the lstat walk: the real path must still be inside the assets folder. */
async function requireInside(root: string, path: string, code: ErrorCode): Promise<void> {
  const [realRoot, realPath] = await Promise.all([realpath(root), realpath(path)]);
  if (!isInside(realRoot, realPath)) {
    throw new PedelecError(code, "the asset path leads outside the assets folder");
  }
}
