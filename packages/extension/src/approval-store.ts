import { z } from "zod";
import type { KeyValueStorage } from "./key-value-storage.js";
import { StoredValue } from "./stored-value.js";

/** The `chrome.storage.local` key holding the approved origins. */
export const APPROVED_ORIGINS_KEY = "approvedOrigins";

/** The origins the user approved, kept in extension storage. Storage failures surface as STORAGE_ERROR. */
export class ApprovalStore {
  readonly #origins: StoredValue<string[]>;

  constructor(storage: KeyValueStorage) {
    this.#origins = new StoredValue(storage, APPROVED_ORIGINS_KEY, z.array(z.string()), () => [], "the approved origins");
  }

  list(): Promise<string[]> {
    return this.#origins.read();
  }

  async isApproved(origin: string): Promise<boolean> {
    return (await this.list()).includes(origin);
  }

  approve(origin: string): Promise<void> {
    return this.#origins.update((origins) => (origins.includes(origin) ? origins : [...origins, origin]));
  }

  revoke(origin: string): Promise<void> {
    return this.#origins.update((origins) => origins.filter((candidate) => candidate !== origin));
  }
}
