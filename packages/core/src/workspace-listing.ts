import { lstat, readdir } from "node:fs/promises";
import { join } from "node:path";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { MAX_WORKSPACE_LIST_BYTES, MAX_WORKSPACE_LIST_ENTRIES, UNLISTED_FOLDER_NAMES } from "@pedelec/protocol/workspace-listing";

export type WorkspaceEntryKind = "files" | "folders";

/** Bounds of one listing; the defaults are the protocol's, a test may lower them. */
export interface WorkspaceListLimits {
  maxEntries: number;
  maxBytes: number;
}

/** How many names the walk may look at per path it may answer with. */
const VISITED_PER_ENTRY = 10;

const DEFAULT_LIMITS: WorkspaceListLimits = { maxEntries: MAX_WORKSPACE_LIST_ENTRIES, maxBytes: MAX_WORKSPACE_LIST_BYTES };

/**
 * Every regular file (`"files"`) or folder (`"folders"`) under `relativeFolder` of the workspace (the whole workspace
 * when null), recursively, as workspace-relative `/`-separated paths sorted by code point. Symlinks are neither listed
 * nor followed, nor may the folder asked for lie through one; `.pedelec-runtime` and `.git` folders are not entered.
 * An answer over the limits is WORKSPACE_LIST_TOO_LARGE, never a shortened list; the walk stops as soon as it knows.
 * The folder path is checked by the request schema (workspaceListPathProblem) before it gets here.
 */
export async function listWorkspaceEntries(
  workspacePath: string,
  kind: WorkspaceEntryKind,
  relativeFolder: string | null,
  limits: WorkspaceListLimits = DEFAULT_LIMITS,
): Promise<string[]> {
  const start = relativeFolder === null ? workspacePath : await folderInside(workspacePath, relativeFolder);
  const found: string[] = [];
  let bytes = 0;
  let visited = 0;
  const where = relativeFolder === null ? "the workspace" : JSON.stringify(relativeFolder);
  const tooLarge = (what: string) =>
    new PedelecError("WORKSPACE_LIST_TOO_LARGE", `${what} (one listing holds at most ${limits.maxEntries} paths, ${limits.maxBytes} bytes of them)`, {
      limitEntries: limits.maxEntries,
      limitBytes: limits.maxBytes,
      path: relativeFolder,
    });
  const add = (path: string) => {
    found.push(path);
    bytes += Buffer.byteLength(path);
    if (found.length > limits.maxEntries || bytes > limits.maxBytes) throw tooLarge(`the ${kind} under ${where} are more than one listing holds`);
  };
  const folders: { absolute: string; relative: string | null }[] = [{ absolute: start, relative: relativeFolder }];
  while (folders.length > 0) {
    const folder = folders.pop()!;
    const entries = await readdir(folder.absolute, { withFileTypes: true }).catch((error: NodeJS.ErrnoException) => {
      // The agent may delete a folder while the walk runs: what is gone is not listed.
      if (error.code === "ENOENT" || error.code === "ENOTDIR") return [];
      throw unreadable(folder.relative, error);
    });
    for (const entry of entries) {
      // What the walk looks at is bounded too: a listing of the few folders among millions of files stops as well.
      visited += 1;
      if (visited > limits.maxEntries * VISITED_PER_ENTRY) throw tooLarge(`${where} holds more names than a listing looks through`);
      if (entry.isSymbolicLink()) continue;
      const relative = folder.relative === null ? entry.name : `${folder.relative}/${entry.name}`;
      if (entry.isDirectory()) {
        if (UNLISTED_FOLDER_NAMES.includes(entry.name)) continue;
        if (kind === "folders") add(relative);
        folders.push({ absolute: join(folder.absolute, entry.name), relative });
      } else if (entry.isFile() && kind === "files") {
        add(relative);
      }
    }
  }
  return found.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/** The absolute path of a workspace folder, each segment checked with lstat: a real folder, never through a symlink. */
async function folderInside(workspacePath: string, relativeFolder: string): Promise<string> {
  let absolute = workspacePath;
  for (const segment of relativeFolder.split("/")) {
    absolute = join(absolute, segment);
    const stats = await lstat(absolute).catch((error: NodeJS.ErrnoException) => {
      if (error.code === "ENOENT" || error.code === "ENOTDIR") return null;
      throw unreadable(relativeFolder, error);
    });
    if (stats === null)
      throw new PedelecError("WORKSPACE_PATH_INVALID", `the workspace has no folder ${JSON.stringify(relativeFolder)}`, { path: relativeFolder });
    if (stats.isSymbolicLink()) {
      throw new PedelecError("WORKSPACE_PATH_INVALID", `${JSON.stringify(relativeFolder)} lies through a symlink, which listings do not follow`, {
        path: relativeFolder,
      });
    }
    if (!stats.isDirectory())
      throw new PedelecError("WORKSPACE_PATH_INVALID", `${JSON.stringify(relativeFolder)} is not a folder`, { path: relativeFolder });
  }
  return absolute;
}

function unreadable(relativeFolder: string | null, error: NodeJS.ErrnoException): PedelecError {
  const where = relativeFolder === null ? "the workspace" : JSON.stringify(relativeFolder);
  return new PedelecError("WORKSPACE_PATH_INVALID", `${where} could not be listed: ${error.code ?? error.message}`, {
    path: relativeFolder,
    errorCode: error.code ?? null,
  });
}
