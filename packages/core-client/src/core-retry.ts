import { access } from "node:fs/promises";

const FIRST_RETRY_DELAY_MS = 1;
const MAX_RETRY_DELAY_MS = 10;

/**
 * How long to wait before attempt `attempt + 1` at a Core that is starting: 1 ms, doubling up to 10 ms. Core listens
 * some hundred milliseconds after its launch; the fixed 50 ms this replaces found it 25 ms late on average.
 */
export function retryDelayMs(attempt: number): number {
  return Math.min(MAX_RETRY_DELAY_MS, FIRST_RETRY_DELAY_MS * 2 ** attempt);
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
