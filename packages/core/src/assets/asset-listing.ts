import { lstat, readdir } from "node:fs/promises";
import { join } from "node:path";
import { assetPathProblem, type AssetEntry } from "@pedelec/protocol/assets";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { assetsRoot, existingAssetsRoot, isReservedName } from "./asset-location.js";

/** The most entries listAssets answers with (the newest ones). */
export const MAX_LISTED_ASSETS = 10_000;
/** How many names the walk looks at before it stops, so a runaway folder cannot keep Core busy. */
const MAX_VISITED_NAMES = 100_000;

interface Found extends AssetEntry {
  modifiedAtMs: number;
}

/**
 * Every regular file under the workspace's assets folder, newest first, then by path. Symlinks are neither listed nor
 * followed; `.pedelec-*` names (Pedelec's temporary uploads) are hidden with everything under them; names a page
 * could not address (see assetPathProblem) are left out too, so every listed path can be read.
 */
export async function listAssetFiles(workspacePath: string): Promise<AssetEntry[]> {
  return walkAssets(await assetsRoot(workspacePath, "ASSET_LIST_FAILED"));
}

/**
 * The same listing, of the assets folder as it is: none (or one that is not a real folder) lists nothing, and nothing
 * is created or repaired.
 */
export async function listExistingAssetFiles(workspacePath: string): Promise<AssetEntry[]> {
  const root = await existingAssetsRoot(workspacePath);
  return root === null ? [] : walkAssets(root);
}

async function walkAssets(root: string): Promise<AssetEntry[]> {
  const found: Found[] = [];
  const folders: { absolute: string; assetPath: string }[] = [{ absolute: root, assetPath: "" }];
  let visited = 0;
  try {
    while (folders.length > 0 && visited < MAX_VISITED_NAMES) {
      const folder = folders.pop()!;
      const entries = await readdir(folder.absolute, { withFileTypes: true }).catch(vanishedAsEmpty);
      for (const entry of entries) {
        visited += 1;
        if (visited > MAX_VISITED_NAMES) break;
        if (isReservedName(entry.name) || entry.isSymbolicLink()) continue;
        const assetPath = `${folder.assetPath}/${entry.name}`;
        if (assetPathProblem(assetPath) !== null) continue;
        const absolute = join(folder.absolute, entry.name);
        if (entry.isDirectory()) {
          folders.push({ absolute, assetPath });
          continue;
        }
        if (!entry.isFile()) continue;
        const stats = await lstat(absolute).catch(vanishedAsNull);
        if (stats === null || !stats.isFile()) continue;
        found.push({ name: entry.name, path: assetPath, sizeBytes: stats.size, modifiedAt: stats.mtime.toISOString(), modifiedAtMs: stats.mtimeMs });
      }
    }
  } catch (error) {
    throw PedelecError.from(error, "ASSET_LIST_FAILED", "the assets folder could not be listed");
  }
  found.sort((a, b) => b.modifiedAtMs - a.modifiedAtMs || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return found.slice(0, MAX_LISTED_ASSETS).map(({ name, path, sizeBytes, modifiedAt }) => ({ name, path, sizeBytes, modifiedAt }));
}

/** The agent may delete files while the walk runs; what is gone is simply not listed. */
function vanishedAsEmpty(error: NodeJS.ErrnoException): [] {
  if (error.code === "ENOENT" || error.code === "ENOTDIR") return [];
  throw error;
}

function vanishedAsNull(error: NodeJS.ErrnoException): null {
  if (error.code === "ENOENT" || error.code === "ENOTDIR") return null;
  throw error;
}
