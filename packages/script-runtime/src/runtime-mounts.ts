import { constants } from "node:fs";
import { open, readlink, type FileHandle } from "node:fs/promises";
import { join } from "node:path";
import { PedelecError } from "@pedelec/protocol/pedelec-error";

/**
 * The child's descriptor numbers of the three folders bubblewrap mounts from open descriptors (stdin, stdout and
 * stderr come first): `.pedelec-runtime` read-only, then its `assets` and `tmp` read-write on top.
 */
export const RUNTIME_MOUNT_FDS = { runtime: 3, assets: 4, tmp: 5 } as const;

/** The runtime folder's parts a sandboxed run sees, open as directories; `fds` in RUNTIME_MOUNT_FDS order. */
export interface RuntimeMounts {
  fds: [runtime: number, assets: number, tmp: number];
  close(): Promise<void>;
}

/**
 * Opens `.pedelec-runtime`, its `assets` and its `tmp` without following a symlink at the last step, then checks
 * through /proc that each descriptor is the folder at the path meant (so no level on the way was a link either).
 * bubblewrap mounts these descriptors, never the paths: a folder swapped for a link after Core checked it cannot bring
 * an outside folder into the sandbox. WORKSPACE_PATH_INVALID when any is not where it belongs.
 */
export async function openRuntimeMounts(runtimeFolder: string): Promise<RuntimeMounts> {
  const handles: FileHandle[] = [];
  const close = async () => {
    await Promise.all(handles.map((handle) => handle.close().catch(() => undefined)));
  };
  try {
    for (const path of [runtimeFolder, join(runtimeFolder, "assets"), join(runtimeFolder, "tmp")]) {
      let handle: FileHandle;
      try {
        handle = await open(path, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
      } catch (error) {
        throw new PedelecError(
          "WORKSPACE_PATH_INVALID",
          `${path} is not a folder Pedelec can give the sandbox: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
        );
      }
      handles.push(handle);
      const opened = await readlink(`/proc/self/fd/${handle.fd}`).catch(() => undefined);
      if (opened !== path)
        throw new PedelecError("WORKSPACE_PATH_INVALID", `${path} led elsewhere (${opened ?? "unknown"}) while the run was prepared`);
    }
  } catch (error) {
    await close();
    throw error;
  }
  return { fds: handles.map((handle) => handle.fd) as RuntimeMounts["fds"], close };
}
