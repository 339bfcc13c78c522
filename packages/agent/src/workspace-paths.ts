import { lstat, realpath } from "node:fs/promises";
import { isAbsolute, join, relative, resolve, sep } from "node:path";
import { PedelecError } from "@pedelec/protocol/pedelec-error";

/** Pedelec's own folder in every workspace; of it the agent sees only `assets/`. */
export const RUNTIME_FOLDER = ".pedelec-runtime";
const VISIBLE_RUNTIME_FOLDER = "assets";

/** A workspace path the agent may use: where it really is, and how to name it to the model. */
export interface ConfinedPath {
  /** The absolute path with every existing part resolved (no symlink left in it). */
  real: string;
  /** Workspace-relative, with `/`, "." for the workspace itself. */
  relative: string;
  /** Whether the path exists. */
  exists: boolean;
}

/**
 * Resolves a workspace-relative path the model gave, refusing anything that could reach outside the workspace:
 * absolute paths, `..` that climbs out, NUL, and any path whose existing part resolves (through symlinks) outside the
 * real workspace, or into Pedelec's own runtime folder other than its assets.
 */
export async function confinePath(workspaceRoot: string, requested: string): Promise<ConfinedPath> {
  if (requested.includes("\0")) throw invalid(requested, "contains a NUL character");
  if (isAbsolute(requested) || /^[A-Za-z]:[\\/]/.test(requested) || requested.startsWith("\\")) {
    throw invalid(requested, "is absolute; give a path relative to the workspace");
  }
  const realRoot = await realpath(workspaceRoot);
  const lexical = resolve(realRoot, requested === "" ? "." : requested);
  if (!inside(realRoot, lexical)) throw invalid(requested, "leaves the workspace");

  // Resolve the longest part that exists; whatever follows it does not exist yet and so cannot be a link.
  const missing: string[] = [];
  let existing = lexical;
  for (;;) {
    try {
      await lstat(existing);
      break;
    } catch {
      missing.unshift(existing.slice(existing.lastIndexOf(sep) + 1));
      existing = resolve(existing, "..");
    }
  }
  let realExisting: string;
  try {
    realExisting = await realpath(existing);
  } catch {
    // A dangling symlink: where it points cannot be checked, so it is not followed.
    throw invalid(requested, "goes through a link that points nowhere");
  }
  const real = join(realExisting, ...missing);
  if (!inside(realRoot, real)) throw invalid(requested, "resolves (through a link) to a place outside the workspace");
  const relativePath = relative(realRoot, real).split(sep).join("/") || ".";
  if (isHiddenRuntimePath(relativePath))
    throw invalid(requested, `is inside Pedelec's own ${RUNTIME_FOLDER} folder (only ${RUNTIME_FOLDER}/${VISIBLE_RUNTIME_FOLDER} is open)`);
  return { real, relative: relativePath, exists: missing.length === 0 };
}

/** Whether a workspace-relative path (with `/`) lies in the runtime folder's hidden part. */
export function isHiddenRuntimePath(relativePath: string): boolean {
  const [first, second] = relativePath.split("/");
  return first === RUNTIME_FOLDER && second !== undefined && second !== VISIBLE_RUNTIME_FOLDER;
}

function inside(root: string, candidate: string): boolean {
  const rest = relative(root, candidate);
  return rest === "" || (!rest.startsWith(`..${sep}`) && rest !== ".." && !isAbsolute(rest));
}

function invalid(requested: string, why: string): PedelecError {
  return new PedelecError("WORKSPACE_PATH_INVALID", `the path ${JSON.stringify(requested.replaceAll("\0", "\\0"))} ${why}`);
}
