import { reportCallbackError } from "./listener-set.js";
import type { AssetUploadProgress } from "./types.js";

/** The shortest gap between two progress callbacks, so a fast upload does not flood the page with renders. */
export const UPLOAD_PROGRESS_INTERVAL_MS = 50;

/**
 * Turns the platform's progress events into the app's `onProgress` calls: throttled, never going backwards, never
 * past the file's size, and ending with one call at 100% when the upload succeeded.
 */
export class UploadProgress {
  readonly #totalBytes: number;
  readonly #listener: ((progress: AssetUploadProgress) => void) | undefined;
  readonly #now: () => number;
  #lastReportedAt: number | undefined;
  #lastLoadedBytes = -1;

  constructor(totalBytes: number, listener: ((progress: AssetUploadProgress) => void) | undefined, now: () => number = Date.now) {
    this.#totalBytes = totalBytes;
    this.#listener = listener;
    this.#now = now;
  }

  /** The platform says `loadedBytes` are sent. */
  report(loadedBytes: number): void {
    if (this.#listener === undefined || !Number.isFinite(loadedBytes)) return;
    const loaded = Math.min(this.#totalBytes, Math.max(0, Math.floor(loadedBytes)));
    if (loaded <= this.#lastLoadedBytes) return;
    const now = this.#now();
    if (this.#lastReportedAt !== undefined && now - this.#lastReportedAt < UPLOAD_PROGRESS_INTERVAL_MS) return;
    this.#lastReportedAt = now;
    this.#emit(loaded);
  }

  /** The upload succeeded: the app hears 100% once, however the throttle fell. */
  finish(): void {
    if (this.#listener === undefined || this.#lastLoadedBytes === this.#totalBytes) return;
    this.#emit(this.#totalBytes);
  }

  #emit(loadedBytes: number): void {
    this.#lastLoadedBytes = loadedBytes;
    try {
      this.#listener?.({ loadedBytes, totalBytes: this.#totalBytes });
    } catch (error) {
      reportCallbackError(error);
    }
  }
}
