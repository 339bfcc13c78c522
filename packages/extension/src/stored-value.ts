import type { z } from "zod";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import type { KeyValueStorage } from "./key-value-storage.js";

/**
 * One value under one storage key, read through a schema and written one change at a time: changes are queued, so
 * two that overlap cannot undo each other. A stored value that does not match the schema (a hand edit, an older
 * format) reads as `empty` rather than being trusted. Storage failures surface as STORAGE_ERROR.
 */
export class StoredValue<T> {
  #writes: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly storage: KeyValueStorage,
    private readonly key: string,
    private readonly schema: z.ZodType<T>,
    private readonly empty: () => T,
    /** Names the value in error messages, e.g. "the approved origins". */
    private readonly description: string,
  ) {}

  /** The value once every queued change is written. */
  async read(): Promise<T> {
    await this.#writes.catch(() => undefined);
    return this.#readNow();
  }

  update(change: (current: T) => T): Promise<void> {
    const write = this.#writes
      .catch(() => undefined)
      .then(async () => {
        const next = change(await this.#readNow());
        try {
          await this.storage.set(this.key, next);
        } catch (error) {
          throw PedelecError.from(error, "STORAGE_ERROR", `could not save ${this.description}`);
        }
      });
    this.#writes = write;
    return write;
  }

  async #readNow(): Promise<T> {
    let stored: unknown;
    try {
      stored = await this.storage.get(this.key);
    } catch (error) {
      throw PedelecError.from(error, "STORAGE_ERROR", `could not read ${this.description}`);
    }
    const parsed = this.schema.safeParse(stored);
    return parsed.success ? parsed.data : this.empty();
  }
}
