/**
 * Every timer the kit starts, so disposing of the kit leaves none behind to fire into the next test. Uses the global
 * setTimeout, so a test that fakes timers fakes the kit's deadlines too.
 */
export class KitTimers {
  readonly #pending = new Set<ReturnType<typeof setTimeout>>();
  #disposed = false;

  /** Runs `callback` after `delayMs` unless cancelled first; returns the cancel function. */
  after(delayMs: number, callback: () => void): () => void {
    if (this.#disposed) return () => undefined;
    const timer = setTimeout(() => {
      this.#pending.delete(timer);
      callback();
    }, delayMs);
    this.#pending.add(timer);
    return () => {
      clearTimeout(timer);
      this.#pending.delete(timer);
    };
  }

  dispose(): void {
    this.#disposed = true;
    for (const timer of this.#pending) clearTimeout(timer);
    this.#pending.clear();
  }
}

/**
 * A promise settled by `register`'s callbacks, or rejected with `timeoutError()` once `timeoutMs` passes. `register`
 * returns what undoes its registration; it runs whichever way the wait ends.
 */
export function waitWithDeadline<T>(
  timers: KitTimers,
  timeoutMs: number,
  timeoutError: () => Error,
  register: (resolve: (value: T) => void, reject: (error: unknown) => void) => () => void,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    let unregister: () => void = () => undefined;
    const finish = (settle: () => void): void => {
      if (settled) return;
      settled = true;
      cancelTimer();
      unregister();
      settle();
    };
    const cancelTimer = timers.after(timeoutMs, () => finish(() => reject(timeoutError())));
    unregister = register(
      (value) => finish(() => resolve(value)),
      (error) => finish(() => reject(error)),
    );
    // The registration may have settled the wait at once, before `unregister` was known.
    if (settled) unregister();
  });
}
