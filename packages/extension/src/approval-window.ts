/** The one window in which the user answers every pending question (`popup.html`). */
export interface ApprovalWindow {
  /** Opens the window, or brings the open one forward; it lists every pending question. Rejects if none can open. */
  show(): Promise<void>;
  /** Closes the window if it is open. */
  close(): Promise<void>;
  /** `listener` runs when the user closes the window (never when `close()` did). */
  onDismissed(listener: () => void): void;
}

/** The part of `chrome.windows` the approval window needs, so its rules are tested with a fake. */
export interface WindowsApi {
  /** Creates a popup window showing `url`; resolves to its id. */
  create(url: string): Promise<number | undefined>;
  /** Brings the window forward; rejects if it no longer exists. */
  focus(windowId: number): Promise<void>;
  remove(windowId: number): Promise<void>;
  onRemoved(listener: (windowId: number) => void): void;
  /** The windows currently showing `url`. */
  showing(url: string): Promise<number[]>;
}

/**
 * Keeps at most one approval window. Opening and closing are queued one after another, so a burst of questions
 * creates one window and a close racing a new question cannot leave two, or none while something is pending.
 * First of all it closes approval windows a previous service worker left open: the questions they showed died with
 * that worker, and an answer given there would reach nobody.
 */
export class SingleApprovalWindow implements ApprovalWindow {
  #windowId: number | undefined;
  #queue: Promise<unknown> = Promise.resolve();
  /** Windows this object removed itself: their removal is not the user dismissing them. */
  readonly #removing = new Set<number>();
  readonly #dismissListeners: (() => void)[] = [];

  constructor(
    private readonly windows: WindowsApi,
    private readonly url: string,
  ) {
    windows.onRemoved((windowId) => this.#removed(windowId));
    void this.#enqueue(async () => {
      const stray = await windows.showing(url);
      await Promise.all(stray.map((windowId) => this.#remove(windowId)));
    }).catch(() => undefined);
  }

  show(): Promise<void> {
    return this.#enqueue(async () => {
      if (this.#windowId !== undefined) {
        try {
          await this.windows.focus(this.#windowId);
          return;
        } catch {
          // Closed under us before Chrome told us; open a new one.
          this.#windowId = undefined;
        }
      }
      const windowId = await this.windows.create(this.url);
      if (windowId === undefined) throw new Error("the browser created no approval window");
      this.#windowId = windowId;
    });
  }

  close(): Promise<void> {
    return this.#enqueue(async () => {
      const windowId = this.#windowId;
      if (windowId === undefined) return;
      this.#windowId = undefined;
      await this.#remove(windowId);
    });
  }

  onDismissed(listener: () => void): void {
    this.#dismissListeners.push(listener);
  }

  async #remove(windowId: number): Promise<void> {
    this.#removing.add(windowId);
    await this.windows.remove(windowId).catch(() => this.#removing.delete(windowId));
  }

  #removed(windowId: number): void {
    if (this.#removing.delete(windowId)) return;
    // An older window going away does not dismiss the questions the current one shows.
    if (windowId !== this.#windowId) return;
    this.#windowId = undefined;
    for (const listener of this.#dismissListeners) listener();
  }

  #enqueue(step: () => Promise<void>): Promise<void> {
    const next = this.#queue.catch(() => undefined).then(step);
    this.#queue = next;
    return next;
  }
}
