import { closeSync, fsyncSync, linkSync, lstatSync, openSync, unlinkSync, writeSync } from "node:fs";

/**
 * Creates `file` with `text()` unless it exists, never leaving it half written: the text goes to a temporary file
 * (0600, flushed), which is hard-linked to `file` (fails when `file` exists, so a concurrent creator's file is never
 * replaced) and then removed. True when this call created it. Synchronous, for Core's start-up before it listens.
 */
export function createPrivateFileExclusivelySync(file: string, text: () => string): boolean {
  try {
    lstatSync(file);
    return false;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  // No node:crypto for the name: Core loads it only when it makes a key; "wx" refuses a name in use anyway.
  const temporary = `${file}.${process.pid}.${process.hrtime.bigint()}.tmp`;
  try {
    const fd = openSync(temporary, "wx", 0o600);
    try {
      writeSync(fd, text());
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    try {
      linkSync(temporary, file);
      return true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
      throw error;
    }
  } finally {
    try {
      unlinkSync(temporary);
    } catch {
      // Never created, or gone already.
    }
  }
}
