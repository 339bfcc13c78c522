import { randomUUID } from "node:crypto";
import { open, rename, rm } from "node:fs/promises";

/**
 * Writes `text` to `file` whole: into a temporary file next to it (0600 from the start, flushed to disk), renamed over
 * `file`, so a reader sees the old contents or the new, never half, and nobody else can read it meanwhile. The
 * temporary file is removed when anything fails; the error is the caller's to report.
 */
export async function writePrivateFileAtomically(file: string, text: string): Promise<void> {
  const temporary = `${file}.${process.pid}.${randomUUID()}.tmp`;
  try {
    const handle = await open(temporary, "wx", 0o600);
    try {
      await handle.writeFile(text);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temporary, file);
  } catch (error) {
    await rm(temporary, { force: true }).catch(() => undefined);
    throw error;
  }
}
