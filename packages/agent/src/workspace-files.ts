import { constants } from "node:fs";
import { lstat, mkdir, open, readdir, stat } from "node:fs/promises";
import { dirname, join } from "node:path";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { confinePath, isHiddenRuntimePath } from "./workspace-paths.js";

/** Largest file the agent reads whole; larger ones it should inspect with a script. */
export const MAX_READ_FILE_BYTES = 256 * 1024;
/** Largest file the agent writes in one call. */
export const MAX_WRITE_FILE_BYTES = 8 * 1024 * 1024;
/** Most entries one listing returns. */
export const MAX_LIST_ENTRIES = 500;
export const DEFAULT_LIST_DEPTH = 2;
export const MAX_LIST_DEPTH = 16;

export interface ListedEntry {
  path: string;
  type: "file" | "directory";
  sizeBytes?: number;
}

/** Lists a folder of the workspace breadth-first; symlinks are skipped, never followed. */
export async function listWorkspaceFiles(workspace: string, path = ".", depth = DEFAULT_LIST_DEPTH) {
  const start = await confinePath(workspace, path);
  if (!start.exists) throw new PedelecError("ASSET_NOT_FOUND", `there is no ${start.relative} in the workspace`);
  if (!(await lstat(start.real)).isDirectory()) throw new PedelecError("ASSET_NOT_FILE", `${start.relative} is a file, not a folder`);
  const entries: ListedEntry[] = [];
  let truncated = false;
  let level: { real: string; relative: string }[] = [{ real: start.real, relative: start.relative }];
  for (let currentDepth = 1; currentDepth <= Math.min(depth, MAX_LIST_DEPTH) && level.length > 0 && !truncated; currentDepth += 1) {
    const next: typeof level = [];
    for (const folder of level) {
      const children = await readdir(folder.real, { withFileTypes: true }).catch(() => []);
      children.sort((left, right) => left.name.localeCompare(right.name));
      for (const child of children) {
        const relativePath = folder.relative === "." ? child.name : `${folder.relative}/${child.name}`;
        if (isHiddenRuntimePath(relativePath) || child.isSymbolicLink()) continue;
        if (!child.isDirectory() && !child.isFile()) continue;
        if (entries.length >= MAX_LIST_ENTRIES) {
          truncated = true;
          break;
        }
        const real = join(folder.real, child.name);
        if (child.isDirectory()) {
          entries.push({ path: relativePath, type: "directory" });
          next.push({ real, relative: relativePath });
        } else {
          const sizeBytes = await lstat(real).then(
            (info) => info.size,
            () => undefined,
          );
          entries.push(sizeBytes === undefined ? { path: relativePath, type: "file" } : { path: relativePath, type: "file", sizeBytes });
        }
      }
      if (truncated) break;
    }
    level = next;
  }
  return { path: start.relative, entries, truncated };
}

/** Reads a UTF-8 text file of the workspace, up to MAX_READ_FILE_BYTES; binary files are refused. */
export async function readWorkspaceFile(workspace: string, path: string) {
  const target = await confinePath(workspace, path);
  if (!target.exists) throw new PedelecError("ASSET_NOT_FOUND", `there is no file ${target.relative} in the workspace`);
  // O_NOFOLLOW: the checked path has no link in it, so a link here means it was swapped in since; refuse it.
  const handle = await open(target.real, constants.O_RDONLY | constants.O_NOFOLLOW).catch((error: NodeJS.ErrnoException) => {
    throw new PedelecError("ASSET_READ_FAILED", `cannot open ${target.relative}: ${error.code ?? error.message}`);
  });
  try {
    const info = await handle.stat();
    if (!info.isFile()) throw new PedelecError("ASSET_NOT_FILE", `${target.relative} is not a file`);
    if (info.size > MAX_READ_FILE_BYTES) {
      throw new PedelecError(
        "ASSET_READ_TOO_LARGE",
        `${target.relative} has ${info.size} bytes, more than the ${MAX_READ_FILE_BYTES} this tool reads; inspect it with run_script instead`,
      );
    }
    const buffer = Buffer.alloc(MAX_READ_FILE_BYTES + 1);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    if (bytesRead > MAX_READ_FILE_BYTES)
      throw new PedelecError("ASSET_READ_TOO_LARGE", `${target.relative} grew past ${MAX_READ_FILE_BYTES} bytes while being read`);
    const bytes = buffer.subarray(0, bytesRead);
    let content: string;
    try {
      if (bytes.includes(0)) throw new Error("NUL");
      content = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    } catch {
      throw new PedelecError("ASSET_TEXT_DECODE_FAILED", `${target.relative} is not UTF-8 text (a binary file?); inspect it with run_script instead`);
    }
    return { path: target.relative, content, sizeBytes: bytesRead };
  } finally {
    await handle.close();
  }
}

/** Writes (creates or replaces) a text file of the workspace, creating its folders. */
export async function writeWorkspaceFile(workspace: string, path: string, content: string) {
  const bytes = Buffer.from(content, "utf8");
  if (bytes.length > MAX_WRITE_FILE_BYTES)
    throw new PedelecError("ASSET_TOO_LARGE", `the content has ${bytes.length} bytes, more than the ${MAX_WRITE_FILE_BYTES} one write may have`);
  const target = await confinePath(workspace, path);
  if (target.relative === ".") throw new PedelecError("WORKSPACE_PATH_INVALID", "give the path of a file, not the workspace itself");
  if (target.exists && !(await stat(target.real)).isFile()) throw new PedelecError("ASSET_NOT_FILE", `${target.relative} exists and is not a file`);
  await mkdir(dirname(target.real), { recursive: true });
  const handle = await open(target.real, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW, 0o644).catch(
    (error: NodeJS.ErrnoException) => {
      throw new PedelecError("WORKSPACE_PATH_INVALID", `cannot write ${target.relative}: ${error.code ?? error.message}`);
    },
  );
  try {
    await handle.writeFile(bytes);
  } finally {
    await handle.close();
  }
  return { path: target.relative, bytesWritten: bytes.length, created: !target.exists };
}
