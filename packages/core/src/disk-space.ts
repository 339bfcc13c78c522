import { statfs } from "node:fs/promises";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { limitSettingKey, type DiskSpaceLowDetails } from "@pedelec/protocol/resource-limits";

/** Bytes an unprivileged process may still write on the file system that holds `path`. */
export async function freeDiskBytes(path: string): Promise<number> {
  const stats = await statfs(path);
  return stats.bavail * stats.bsize;
}

export type FreeBytesOf = (path: string) => Promise<number>;

/** DISK_SPACE_LOW with the figures the page reads from its details. */
export function diskSpaceLow(what: string, details: Omit<DiskSpaceLowDetails, "setting">): PedelecError {
  const full: DiskSpaceLowDetails = { ...details, setting: limitSettingKey("minFreeDiskBytes") };
  return new PedelecError(
    "DISK_SPACE_LOW",
    `${what} would leave less than ${details.limit} bytes free on the workspace's disk (${details.free} are free)`,
    full,
  );
}

/**
 * Refuses, before anything is written, work that would take the disk holding `path` below `floor` free bytes:
 * `requested` is what the work will write (0 when that is not known ahead, as for a script).
 */
export async function requireFreeSpace(
  path: string,
  requested: number,
  floor: number,
  what: string,
  freeBytesOf: FreeBytesOf = freeDiskBytes,
): Promise<void> {
  if (floor === 0) return;
  const free = await freeBytesOf(path);
  if (free - requested < floor) throw diskSpaceLow(what, { limit: floor, free, requested });
}

/** How often a running script's disk is looked at. */
export const FREE_SPACE_POLL_MS = 500;

/**
 * Watches the disk under a running script: once fewer than `floor` bytes are free, `onLow` is called (once) with
 * DISK_SPACE_LOW, and the caller stops the script. A script can write quickly, so the floor is a margin, not an exact
 * stop; at the default 1 GiB it leaves room for a write rate of 2 GiB/s between two looks.
 */
export function watchFreeSpace(
  path: string,
  floor: number,
  onLow: (error: PedelecError) => void,
  options: { pollMs?: number; freeBytesOf?: FreeBytesOf } = {},
): () => void {
  if (floor === 0) return () => undefined;
  const freeBytesOf = options.freeBytesOf ?? freeDiskBytes;
  let stopped = false;
  let looking = false;
  const timer = setInterval(() => {
    if (looking || stopped) return;
    looking = true;
    freeBytesOf(path).then(
      (free) => {
        looking = false;
        if (stopped || free >= floor) return;
        stop();
        onLow(diskSpaceLow("the script's writes", { limit: floor, free, requested: 0 }));
      },
      // A disk that cannot be looked at (the workspace went away) is the script's own failure to meet, not ours.
      () => (looking = false),
    );
  }, options.pollMs ?? FREE_SPACE_POLL_MS);
  timer.unref();
  const stop = (): void => {
    stopped = true;
    clearInterval(timer);
  };
  return stop;
}
