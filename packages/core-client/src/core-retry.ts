import { watch, type FSWatcher } from "node:fs";
import { access } from "node:fs/promises";
import { dirname } from "node:path";

const FIRST_RETRY_DELAY_MS = 1;
const MAX_RETRY_DELAY_MS = 10;

/**
 * How long to wait before attempt `attempt + 1` at a Core that is starting: 1 ms, doubling up to 10 ms. Core listens
 * some hundred milliseconds after its launch; the fixed 50 ms this replaces found it 25 ms late on average.
 */
export function retryDelayMs(attempt: number): number {
  return Math.min(MAX_RETRY_DELAY_MS, FIRST_RETRY_DELAY_MS * 2 ** attempt);
}

/**
 * Wakes whoever waits for Core's socket as soon as something changes in the socket's folder (Core creating the socket
 * there), instead of at the next retry: the retries alone found a Core 1 to 5 ms after it listened. A folder that
 * does not exist yet (Core's first start in a new home creates it) is watched from the first pause that finds it.
 * Named pipes (Windows) have no folder to watch: there the retries are all there is.
 */
export class SocketFolderWatch {
  readonly #folder: string;
  #watcher: FSWatcher | undefined;
  #closed = process.platform === "win32";
  /** Something changed while no pause waited (during an attempt): the next pause ends at once. */
  #changed = false;
  #wake: (() => void) | undefined;

  constructor(socketPath: string) {
    this.#folder = dirname(socketPath);
    this.#watch();
  }

  /** Resolves after `delayMs`, when the folder changes, or when `signal` aborts, whichever comes first. */
  async pause(delayMs: number, signal?: AbortSignal): Promise<void> {
    // Watched only from now: the socket may have appeared since the last attempt, so that attempt is made at once.
    if (this.#watcher === undefined && this.#watch()) this.#changed = true;
    if (!this.#changed) {
      const changed = new AbortController();
      this.#wake = () => changed.abort();
      await pause(delayMs, signal ? AbortSignal.any([signal, changed.signal]) : changed.signal);
      this.#wake = undefined;
    }
    this.#changed = false;
  }

  close(): void {
    this.#closed = true;
    this.#watcher?.close();
    this.#watcher = undefined;
  }

  /** Starts watching the folder; false when it cannot (yet). */
  #watch(): boolean {
    if (this.#closed) return false;
    try {
      this.#watcher = watch(this.#folder, { persistent: false }, () => {
        this.#changed = true;
        this.#wake?.();
      });
    } catch {
      return false;
    }
    this.#watcher.on("error", () => this.close());
    return true;
  }
}

/** Resolves after `delayMs`, or at once when `signal` aborts. */
export function pause(delayMs: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, delayMs);
    signal?.addEventListener("abort", done, { once: true });
  });
}

/** Whether the socket file is there: much cheaper than a failed connect, so waits can be short. */
export function socketFileExists(socketPath: string): Promise<boolean> {
  return access(socketPath).then(
    () => true,
    () => false,
  );
}
