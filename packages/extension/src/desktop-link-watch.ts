import type { DesktopLinkRequest, DesktopLinkResponse, DesktopLinkStatus } from "./internal-messages.js";

export interface DesktopLinkWatchOptions {
  /** Asks the service worker; every failure comes back as an answer. */
  ask: (request: DesktopLinkRequest) => Promise<DesktopLinkResponse>;
  show: (status: DesktopLinkStatus) => void;
  /** Shown when the worker could not answer. */
  showError: (message: string) => void;
  /** Time between two questions while the page is open. */
  intervalMs?: number;
}

const DEFAULT_INTERVAL_MS = 1_000;

/**
 * Keeps the popup's view of the desktop link fresh while the popup is open: asks the worker at once, then again a
 * second after each answer (never two questions at a time). `check()` asks the worker to open the link and wait for
 * the native host's word, then shows the result. `stop()` ends the polling.
 */
export class DesktopLinkWatch {
  readonly #options: DesktopLinkWatchOptions;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #stopped = false;
  /** The latest question, so an older answer arriving late never overwrites a newer one. */
  #asked = 0;

  constructor(options: DesktopLinkWatchOptions) {
    this.#options = options;
  }

  start(): void {
    void this.#poll();
  }

  /** Resolves once the check's answer is shown. */
  async check(): Promise<void> {
    await this.#ask({ type: "check-desktop-link" });
  }

  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
  }

  async #poll(): Promise<void> {
    if (this.#stopped) return;
    await this.#ask({ type: "get-desktop-link" });
    if (this.#stopped) return;
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => void this.#poll(), this.#options.intervalMs ?? DEFAULT_INTERVAL_MS);
  }

  async #ask(request: DesktopLinkRequest): Promise<void> {
    const asked = ++this.#asked;
    const response = await this.#options.ask(request);
    if (this.#stopped || asked !== this.#asked) return;
    if (response.ok) this.#options.show(response.link);
    else this.#options.showError(response.error.message);
  }
}
