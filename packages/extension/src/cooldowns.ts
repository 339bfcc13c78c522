/** One refusal that is still cooling down. */
export interface ActiveCooldown<T> {
  readonly subject: T;
  /** When the subject may be asked about again. */
  readonly until: Date;
}

/**
 * Subjects the user refused recently, by key, each until its own deadline. Read against the injected clock, so
 * tests need no waiting; expired entries are dropped as they are read.
 */
export class Cooldowns<T> {
  readonly #entries = new Map<string, ActiveCooldown<T>>();

  constructor(private readonly now: () => Date) {}

  start(key: string, subject: T, durationMs: number): void {
    if (durationMs <= 0) return;
    this.#entries.set(key, { subject, until: new Date(this.now().getTime() + durationMs) });
  }

  /** The running cooldown for `key`, if any. */
  get(key: string): ActiveCooldown<T> | undefined {
    const entry = this.#entries.get(key);
    if (entry && entry.until.getTime() <= this.now().getTime()) {
      this.#entries.delete(key);
      return undefined;
    }
    return entry;
  }

  clear(key: string): void {
    this.#entries.delete(key);
  }

  /** Every running cooldown, soonest to end first. */
  list(): ActiveCooldown<T>[] {
    return [...this.#entries.keys()]
      .map((key) => this.get(key))
      .filter((entry): entry is ActiveCooldown<T> => entry !== undefined)
      .sort((left, right) => left.until.getTime() - right.until.getTime());
  }
}
