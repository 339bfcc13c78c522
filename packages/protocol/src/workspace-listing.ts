import { z } from "zod";
import { sessionIdSchema } from "./domain.js";

/** The most paths one `listFiles()` / `listFolders()` answers with; a larger answer is WORKSPACE_LIST_TOO_LARGE. */
export const MAX_WORKSPACE_LIST_ENTRIES = 50_000;
/** The most bytes (UTF-8) the listed paths may add up to; a larger answer is WORKSPACE_LIST_TOO_LARGE. */
export const MAX_WORKSPACE_LIST_BYTES = 4 * 1024 * 1024;
/** Folders a listing never enters: Pedelec's own, and git's store (`.git` holds git's objects, not the project's files). */
export const UNLISTED_FOLDER_NAMES: readonly string[] = [".pedelec-runtime", ".git"];
const MAX_LIST_PATH_LENGTH = 4096;

/**
 * Why `path` is not a workspace-relative folder to list, or null when it is: `/`-separated, no leading `/`, no empty,
 * `.` or `..` segment, no `\`, NUL or other control character, and not inside a folder listings never enter.
 */
export function workspaceListPathProblem(path: string): string | null {
  if (path.length === 0) return "must not be empty (leave it out to list the whole workspace)";
  if (path.length > MAX_LIST_PATH_LENGTH) return `must be at most ${MAX_LIST_PATH_LENGTH} characters`;
  if (path.startsWith("/")) return "must be relative to the workspace (no leading /)";
  if (path.includes("\\")) return "must use / (no backslash)";
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the pattern exists to find control characters
  if (/[\u0000-\u001f\u007f]/.test(path)) return "must not hold control characters";
  for (const segment of path.split("/")) {
    if (segment === "") return "must not have empty segments";
    if (segment === "." || segment === "..") return "must not have . or .. segments";
    if (UNLISTED_FOLDER_NAMES.includes(segment)) return `must not enter ${segment}`;
  }
  return null;
}

export const workspaceListPathSchema = z.string().superRefine((path, context) => {
  const problem = workspaceListPathProblem(path);
  if (problem !== null) context.addIssue({ code: "custom", message: `folder path ${problem}` });
});

export const workspaceListingRequestSchemas = {
  /**
   * `workspace.listFiles(path?)` / `listFolders(path?)`: every regular file (or folder) under `path` (the whole
   * workspace without it), recursively, as workspace-relative `/`-separated paths in code-point order. Symlinks are
   * neither listed nor followed.
   */
  listWorkspaceEntries: {
    payload: z.strictObject({ sessionId: sessionIdSchema, kind: z.enum(["files", "folders"]), path: workspaceListPathSchema.optional() }),
    result: z.object({ paths: z.array(z.string()).max(MAX_WORKSPACE_LIST_ENTRIES) }),
  },
} as const;
