import { lstat, realpath, stat } from "node:fs/promises";
import { isAbsolute, relative, resolve, sep } from "node:path";
import type { ErrorCode } from "@pedelec/protocol/error-codes";
import { PedelecError } from "@pedelec/protocol/pedelec-error";

/** True when `path` is `root` itself or below it (both absolute and normalized). */
export function isInside(root: string, path: string): boolean {
  const rest = relative(root, path);
  return rest === "" || (!rest.startsWith(`..${sep}`) && rest !== ".." && !isAbsolute(rest));
}

/** The real path of the workspace root; it must be an absolute path to an existing folder. */
export async function resolveWorkspaceRoot(workspaceRoot: string): Promise<string> {
  if (!isAbsolute(workspaceRoot) || workspaceRoot.includes("\0")) {
    throw new PedelecError("WORKSPACE_PATH_INVALID", `the workspace root must be an absolute path: ${JSON.stringify(workspaceRoot)}`);
  }
  let real: string;
  try {
    real = await realpath(workspaceRoot);
  } catch {
    throw new PedelecError("WORKSPACE_PATH_INVALID", `the workspace ${workspaceRoot} does not exist`);
  }
  if (!(await stat(real)).isDirectory()) {
    throw new PedelecError("WORKSPACE_PATH_INVALID", `the workspace ${workspaceRoot} is not a folder`);
  }
  return real;
}

/**
 * Confines a caller-written workspace-relative path: no absolute paths, URLs, NUL or empty names; no way out through
 * `..`; no symlink anywhere on the way (the real path must be the path as written); a regular file.
 * Returns the absolute real path. `what` names the file in messages ("entry", "import map").
 */
export async function resolveWorkspaceFile(realWorkspace: string, path: string, what: string, code: ErrorCode): Promise<string> {
  const refuse = (why: string): never => {
    throw new PedelecError(code, `the ${what} ${JSON.stringify(path)} ${why}`);
  };
  if (path === "") refuse("is empty");
  if (path.includes("\0")) refuse("contains a NUL character");
  if (isAbsolute(path) || /^[A-Za-z]:[\\/]/.test(path) || path.startsWith("\\")) refuse("must be relative to the workspace, not absolute");
  if (/^[A-Za-z][A-Za-z0-9+.-]*:/.test(path)) refuse("must be a workspace-relative path, not a URL");
  const written = resolve(realWorkspace, path);
  if (!isInside(realWorkspace, written)) refuse("leaves the workspace");
  let real: string;
  try {
    real = await realpath(written);
  } catch {
    return refuse("does not exist in the workspace");
  }
  if (!isInside(realWorkspace, real)) refuse("resolves outside the workspace through a symlink");
  if (real !== written) refuse("goes through a symlink; give the file's own path");
  const info = await lstat(real);
  if (!info.isFile()) refuse("is not a regular file");
  return real;
}
