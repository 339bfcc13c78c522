/**
 * Callbacks of one kind. A throwing app callback must not stop the others or the SDK's own bookkeeping,
 * so its error is rethrown on its own task, where the page's error reporting sees it.
 */
export class ListenerSet<TArguments extends unknown[]> {
  // One entry per registration, so registering the same function twice needs two unsubscribes.
  readonly #entries = new Set<{ listener: (...args: TArguments) => void }>();

  add(listener: (...args: TArguments) => void): () => void {
    const entry = { listener };
    this.#entries.add(entry);
    return () => {
      this.#entries.delete(entry);
    };
  }

  get size(): number {
    return this.#entries.size;
  }

  emit(...args: TArguments): void {
    for (const entry of [...this.#entries]) {
      try {
        entry.listener(...args);
      } catch (error) {
        reportCallbackError(error);
      }
    }
  }

  clear(): void {
    this.#entries.clear();
  }
}

export function reportCallbackError(error: unknown): void {
  const report = (globalThis as { reportError?: (error: unknown) => void }).reportError;
  if (typeof report === "function") {
    report(error);
    return;
  }
  setTimeout(() => {
    throw error;
  }, 0);
}
