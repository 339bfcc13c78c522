import { artifactKindOf, MAX_ARTIFACTS_PER_TURN, type Artifact } from "@pedelec/protocol/artifacts";
import { listExistingAssetFiles } from "./asset-listing.js";
import { mimeTypeOf } from "./asset-mime.js";

/** The assets folder as a turn begins: each file's path, with its size and modification time. */
export type AssetSnapshot = ReadonlyMap<string, string>;

const versionOf = (entry: { sizeBytes: number; modifiedAt: string }): string => `${entry.sizeBytes}@${entry.modifiedAt}`;

/** What the assets folder holds now; an empty folder (or none) is an empty snapshot. Nothing is created. */
export async function assetSnapshot(workspacePath: string): Promise<AssetSnapshot> {
  const entries = await listExistingAssetFiles(workspacePath);
  return new Map(entries.map((entry) => [entry.path, versionOf(entry)]));
}

/**
 * The files new or changed (in size or modification time) since `before`, in path order: at most
 * MAX_ARTIFACTS_PER_TURN, and `more` counts the rest. A file deleted since is no artifact.
 */
export async function artifactsSince(workspacePath: string, before: AssetSnapshot): Promise<{ artifacts: Artifact[]; more: number }> {
  const changed = (await listExistingAssetFiles(workspacePath)).filter((entry) => before.get(entry.path) !== versionOf(entry));
  changed.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const artifacts = changed.slice(0, MAX_ARTIFACTS_PER_TURN).map(({ path, sizeBytes, modifiedAt }): Artifact => {
    const mediaType = mimeTypeOf(path);
    return { path, kind: artifactKindOf(mediaType), sizeBytes, mediaType, modifiedAt };
  });
  return { artifacts, more: changed.length - artifacts.length };
}
