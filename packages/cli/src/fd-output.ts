import { writeSync } from "node:fs";

/**
 * Writes text to stdout or stderr (`fd` 1 or 2) without creating `process.stdout`: for a pipe, which is how agents run
 * pedelec-cli, that stream is a socket whose setup is a good part of a short command's start-up. A pipe the other end
 * reads slowly can refuse a synchronous write (EAGAIN); the rest then goes through the stream, which waits for it.
 */
export function writeOutput(fd: 1 | 2, text: string): void {
  const bytes = Buffer.from(text, "utf8");
  let offset = 0;
  while (offset < bytes.length) {
    try {
      offset += writeSync(fd, bytes, offset);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EAGAIN") throw error;
      (fd === 1 ? process.stdout : process.stderr).write(bytes.subarray(offset));
      return;
    }
  }
}
