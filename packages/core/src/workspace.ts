import { mkdir, realpath, rm, stat, readdir } from "node:fs/promises";
import { homedir } from "node:os";
import { isAbsolute, join, relative, sep } from "node:path";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { ensureRuntimeFolders, RUNTIME_FOLDER } from "@pedelec/script-runtime/runtime-folders";
import { isInside, refusedWorkspaceReason } from "./workspace-policy.js";

export const RUNTIME_DIR_NAME = RUNTIME_FOLDER;

export interface PreparedWorkspace {
  /** Real path of the workspace root. */
  path: string;
  /** Managed workspaces belong to Core and are removed by it; explicit ones are never deleted. */
  managed: boolean;
}

/**
 * `.pedelec-runtime/{assets,logs,skills,tmp}`, every level checked with lstat before anything is made below it: a
 * symlinked `.pedelec-runtime` is WORKSPACE_PATH_INVALID and nothing is created at its target; a damaged sub-folder is
 * repaired (see ensureRuntimeFolders).
 */
async function createRuntimeDirs(root: string): Promise<void> {
  await ensureRuntimeFolders(root);
}

/** PEDELEC_HOME/workspaces/<threadId>, created fresh. */
export async function prepareManagedWorkspace(workspacesDir: string, threadId: string): Promise<PreparedWorkspace> {
  await mkdir(workspacesDir, { recursive: true, mode: 0o700 });
  const root = join(workspacesDir, threadId);
  await mkdir(root, { mode: 0o700 });
  await createRuntimeDirs(root);
  return { path: await realpath(root), managed: true };
}

export interface ExplicitWorkspaceRoots {
  /** PEDELEC_HOME. */
  pedelecHome: string;
  workspacesDir: string;
  /** The user's home folder; defaults to the OS's idea of it. */
  userHome?: string;
}

/**
 * An app-chosen folder the user consented to in the extension: absolute, existing, a directory, not a system
 * folder, not the home folder itself, and clear of Pedelec's own files. Existing content is left alone; only
 * `.pedelec-runtime/` is added, and only once every check passed.
 */
export async function prepareExplicitWorkspace(requestedPath: string, roots: ExplicitWorkspaceRoots): Promise<PreparedWorkspace> {
  const { workspacesDir } = roots;
  if (!isAbsolute(requestedPath)) {
    throw new PedelecError("WORKSPACE_PATH_INVALID", `workspace.path must be absolute: ${requestedPath}`);
  }
  let real: string;
  try {
    real = await realpath(requestedPath);
  } catch {
    throw new PedelecError("WORKSPACE_PATH_INVALID", `workspace.path does not exist: ${requestedPath}`);
  }
  if (!(await stat(real)).isDirectory()) {
    throw new PedelecError("WORKSPACE_PATH_INVALID", `workspace.path is not a directory: ${requestedPath}`);
  }
  await mkdir(workspacesDir, { recursive: true, mode: 0o700 });
  const managedRoot = await realpath(workspacesDir);
  if (isInside(managedRoot, real) || isInside(real, managedRoot)) {
    throw new PedelecError("WORKSPACE_PATH_INVALID", `workspace.path overlaps Pedelec's managed workspaces: ${requestedPath}`);
  }
  const refused = refusedWorkspaceReason(real, {
    pedelecHome: await realpath(roots.pedelecHome),
    userHome: await realpath(roots.userHome ?? homedir()).catch(() => roots.userHome ?? homedir()),
  });
  if (refused !== null) {
    throw new PedelecError("WORKSPACE_PATH_INVALID", `workspace.path ${requestedPath} is refused: ${refused}`);
  }
  await createRuntimeDirs(real);
  return { path: real, managed: false };
}

export async function removeManagedWorkspace(workspacesDir: string, workspace: PreparedWorkspace): Promise<void> {
  if (!workspace.managed) return;
  const managedRoot = await realpath(workspacesDir).catch(() => workspacesDir);
  // Belt and braces: only ever delete a direct child of the managed root.
  if (relative(managedRoot, workspace.path).includes(sep) || !isInside(managedRoot, workspace.path)) return;
  await rm(workspace.path, { recursive: true, force: true });
}

/**
 * Removes managed workspaces no resumable session owns (left by sessions that ended while Core could not remove them);
 * `keep` holds the real paths of the live sessions' workspaces.
 */
export async function sweepManagedWorkspaces(workspacesDir: string, keep: ReadonlySet<string> = new Set()): Promise<number> {
  let names: string[];
  try {
    names = await readdir(workspacesDir);
  } catch {
    return 0;
  }
  const managedRoot = await realpath(workspacesDir).catch(() => workspacesDir);
  const leftovers = names.filter((name) => !keep.has(join(managedRoot, name)));
  await Promise.all(leftovers.map((name) => rm(join(workspacesDir, name), { recursive: true, force: true })));
  return leftovers.length;
}
