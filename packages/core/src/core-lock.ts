import { closeSync, openSync, writeSync } from "node:fs";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { isProcessRunning } from "./process-stat.js";
import { readTextQuietly, unlinkQuietly } from "./quiet-files.js";

/**
 * One Core per PEDELEC_HOME: an exclusive lock file holding the owner's pid. A lock whose owner is gone (or a zombie:
 * a killed Core whose parent never reaped it) is stale and taken over, so a crashed Core never blocks the next start.
 */
export function acquireCoreLock(lockPath: string): { release: () => void } {
  for (let attempt = 0; attempt < 3; attempt += 1) {
    try {
      const fd = openSync(lockPath, "wx", 0o600);
      try {
        writeSync(fd, String(process.pid));
      } finally {
        closeSync(fd);
      }
      return {
        release: () => {
          if (readTextQuietly(lockPath) === String(process.pid)) unlinkQuietly(lockPath);
        },
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
    // "" (released meanwhile) parses to NaN: the next attempt takes the lock.
    const owner = Number.parseInt(readTextQuietly(lockPath), 10);
    if (Number.isInteger(owner) && owner > 0 && isProcessRunning(owner)) {
      throw new PedelecError("IPC_UNAVAILABLE", `Pedelec Core is already running for this PEDELEC_HOME (pid ${owner})`, {
        alreadyRunning: true,
        pid: owner,
      });
    }
    unlinkQuietly(lockPath);
  }
  throw new PedelecError("IPC_UNAVAILABLE", `could not take the Core lock ${lockPath}`);
}
