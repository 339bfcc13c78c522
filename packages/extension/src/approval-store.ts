import { z } from "zod";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import type { KeyValueStorage } from "./key-value-storage.js";

/** The `chrome.storage.local` key holding the approved origins. */
export const APPROVED_ORIGINS_KEY = "approvedOrigins";

// Anything else under the key (a hand edit, an older format) is read as "nothing approved" rather than trusted.
const storedOriginsSchema = z.array(z.string());

/**
 * The origins the user approved, kept in extension storage. Writes are queued one after another so an approve and a
 * revoke that overlap cannot undo each other. Storage failures surface as STORAGE_ERROR.
 */
export class ApprovalStore {
  #writes: Promise<unknown> = Promise.resolve();

  constructor(private readonly storage: KeyValueStorage) {}

  async list(): Promise<string[]> {
    await this.#writes.catch(() => undefined);
    return this.#read();
  }

  async isApproved(origin: string): Promise<boolean> {
    return (await this.list()).includes(origin);
  }

  approve(origin: string): Promise<void> {
    return this.#update((origins) => (origins.includes(origin) ? origins : [...origins, origin]));
  }

  revoke(origin: string): Promise<void> {
    return this.#update((origins) => origins.filter((candidate) => candidate !== origin));
  }

  #update(change: (origins: string[]) => string[]): Promise<void> {
    const write = this.#writes
      .catch(() => undefined)
      .then(async () => {
        const next = change(await this.#read());
        try {
          await this.storage.set(APPROVED_ORIGINS_KEY, next);
        } catch (error) {
          throw PedelecError.from(error, "STORAGE_ERROR", "could not save the approved origins");
        }
      });
    this.#writes = write;
    return write;
  }

  async #read(): Promise<string[]> {
    let stored: unknown;
    try {
      stored = await this.storage.get(APPROVED_ORIGINS_KEY);
    } catch (error) {
      throw PedelecError.from(error, "STORAGE_ERROR", "could not read the approved origins");
    }
    const parsed = storedOriginsSchema.safeParse(stored);
    return parsed.success ? parsed.data : [];
  }
}
