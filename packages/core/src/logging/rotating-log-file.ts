import { closeSync, fstatSync, mkdirSync, openSync, renameSync, statSync, writeSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { unlinkQuietly } from "../quiet-files.js";

/** When a log file is rotated, and how many rotated files are kept beside it. */
export interface RotationLimits {
  /** A file that has reached this size is renamed to `<name>.1` before the next line. */
  maxBytes: number;
  /** Rotated files kept: `<name>.1` (newest) to `<name>.<keep>`; the oldest beyond that is dropped. */
  keep: number;
}

/** 5 MiB and three rotated files: at most about 20 MiB per process kind. */
export const LOG_ROTATION: RotationLimits = { maxBytes: 5 * 1024 * 1024, keep: 3 };

/** A rotation lock older than this was left by a process that died mid-rotation, and is broken. */
const STALE_ROTATION_LOCK_MS = 10_000;

/**
 * A log file written with synchronous appends and rotated by size, safe for several processes writing the same file
 * (two native hosts, a second Core that logs before its lock refuses it):
 * - every line is one `write` on a file opened for appending, so lines from different processes never interleave;
 * - only the process holding `.<name>.rotating` (created exclusively) rotates, and only if the file it finds under
 *   the name is still over the limit, so two processes never both shift the files;
 * - before each line the writer checks that its descriptor is still the file under the name, and reopens it when
 *   another process rotated: a line written in between lands in `<name>.1`, never lost.
 */
export class RotatingLogFile {
  readonly #path: string;
  readonly #lockPath: string;
  readonly #limits: RotationLimits;
  #descriptor: number | undefined;
  #inode = -1;

  constructor(path: string, limits: RotationLimits = LOG_ROTATION) {
    if (!Number.isInteger(limits.keep) || limits.keep < 1) throw new RangeError("keep must be a whole number of at least 1");
    if (!(limits.maxBytes > 0)) throw new RangeError("maxBytes must be positive");
    this.#path = path;
    this.#lockPath = join(dirname(path), `.${basename(path)}.rotating`);
    this.#limits = limits;
  }

  get path(): string {
    return this.#path;
  }

  /** Appends `text` (whole lines), then rotates if the file reached the limit. Throws when the file cannot be written. */
  write(text: string): void {
    const descriptor = this.#current();
    writeSync(descriptor, text);
    if (fstatSync(descriptor).size >= this.#limits.maxBytes) this.#rotate();
  }

  close(): void {
    if (this.#descriptor !== undefined) closeSync(this.#descriptor);
    this.#descriptor = undefined;
  }

  /** The descriptor of the file now under the name, reopened when it was rotated away or removed. */
  #current(): number {
    const named = statSync(this.#path, { throwIfNoEntry: false });
    if (this.#descriptor !== undefined && named?.ino === this.#inode) return this.#descriptor;
    this.close();
    mkdirSync(dirname(this.#path), { recursive: true, mode: 0o700 });
    const descriptor = openSync(this.#path, "a", 0o600);
    this.#descriptor = descriptor;
    this.#inode = fstatSync(descriptor).ino;
    return descriptor;
  }

  #rotate(): void {
    if (!this.#lock()) return;
    try {
      // Another process may have rotated between this one's write and its lock.
      const named = statSync(this.#path, { throwIfNoEntry: false });
      if (named === undefined || named.size < this.#limits.maxBytes) return;
      for (let index = this.#limits.keep - 1; index >= 1; index -= 1) renameIfPresent(`${this.#path}.${index}`, `${this.#path}.${index + 1}`);
      renameSync(this.#path, `${this.#path}.1`);
    } finally {
      unlinkQuietly(this.#lockPath);
    }
    // The next write opens a fresh file under the name.
  }

  /**
   * True when this process now holds the rotation lock; false when another does (it rotates instead). Only a stale
   * lock is removed: a lock that vanished between the attempt and the look is tried again, never unlinked, since by
   * then another process may have taken it anew, and removing that one would let two processes shift the files.
   */
  #lock(): boolean {
    for (let attempt = 0; attempt < 3; attempt += 1) {
      try {
        closeSync(openSync(this.#lockPath, "wx", 0o600));
        return true;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
        const held = statSync(this.#lockPath, { throwIfNoEntry: false });
        if (held === undefined) continue;
        if (Date.now() - held.mtimeMs < STALE_ROTATION_LOCK_MS) return false;
        unlinkQuietly(this.#lockPath);
      }
    }
    return false;
  }
}

function renameIfPresent(from: string, to: string): void {
  try {
    renameSync(from, to);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
}
