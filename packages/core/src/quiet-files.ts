import { readFileSync, unlinkSync } from "node:fs";

// Small files Core reads and removes while another process may do the same (a lock, a socket, a ledger entry): one
// that is gone, or cannot be read or removed, is no error here; whoever needs it next says so.

/** Removes `path`; nothing happens when it is gone already. */
export function unlinkQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // Nothing to remove.
  }
}

/** The text of `path`, or "" when it is gone or cannot be read. */
export function readTextQuietly(path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return "";
  }
}
