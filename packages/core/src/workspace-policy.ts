import { isAbsolute, relative, sep } from "node:path";

export function isInside(parent: string, child: string): boolean {
  const path = relative(parent, child);
  return path === "" || (!path.startsWith(`..${sep}`) && path !== ".." && !isAbsolute(path));
}

/** Folders that hold the operating system: neither they nor anything inside them is ever a workspace. */
const SYSTEM_TREES = [
  "/etc",
  "/usr",
  "/bin",
  "/sbin",
  "/lib",
  "/lib32",
  "/lib64",
  "/libx32",
  "/boot",
  "/dev",
  "/proc",
  "/sys",
  "/run",
  "/System",
  "/Library",
  "/private/etc",
  "/Applications",
];
/**
 * Folders that hold everybody's files: the folder itself is refused, a project inside it is fine (macOS keeps
 * temporary folders under /private/var/folders, for example).
 */
const SHARED_ROOTS = [
  "/",
  "/var",
  "/home",
  "/Users",
  "/root",
  "/tmp",
  "/opt",
  "/srv",
  "/mnt",
  "/media",
  "/private",
  "/private/var",
  "/private/tmp",
  "/Volumes",
  "/nix",
];

export interface WorkspaceGuardPaths {
  /** PEDELEC_HOME, resolved: Core's own files (sockets, keys, managed workspaces). */
  pedelecHome: string;
  /** The user's home folder, resolved. */
  userHome: string;
}

/**
 * Why `realPath` (already resolved through symlinks) may not be an explicit workspace, or null when it may. A page
 * must not point its agent at the system, at the whole home folder, or at Pedelec's own files, whatever the user
 * clicked.
 */
export function refusedWorkspaceReason(realPath: string, paths: WorkspaceGuardPaths): string | null {
  if (SYSTEM_TREES.some((tree) => isInside(tree, realPath))) return "it is a system folder";
  if (SHARED_ROOTS.includes(realPath)) return "it is a system folder";
  if (realPath === paths.userHome) return "it is the user's home folder itself";
  if (isInside(paths.pedelecHome, realPath)) return "it is inside Pedelec's own folder (PEDELEC_HOME)";
  if (isInside(realPath, paths.pedelecHome)) return "it contains Pedelec's own folder (PEDELEC_HOME)";
  return null;
}
