import { z } from "zod";
import type { KeyValueStorage } from "./key-value-storage.js";
import { ownValue, withKey, withoutKey } from "./own-record.js";
import { StoredValue } from "./stored-value.js";

/** The `chrome.storage.local` key holding Full Access revocations Core has not confirmed yet, origin → revokedAt (ms). */
export const PENDING_REVOCATIONS_KEY = "pendingFullAccessRevocations";

/**
 * Revocations of Full Access waiting for Core's confirmation. They outlive the service worker, so a revocation made
 * while the native host or Core was away still reaches Core later.
 */
export class RevocationStore {
  readonly #pending: StoredValue<Record<string, number>>;

  constructor(storage: KeyValueStorage) {
    this.#pending = new StoredValue(
      storage,
      PENDING_REVOCATIONS_KEY,
      z.record(z.string(), z.number().int().min(0)),
      () => ({}),
      "the pending Full Access revocations",
    );
  }

  list(): Promise<Record<string, number>> {
    return this.#pending.read();
  }

  async pendingFor(origin: string): Promise<number | undefined> {
    return ownValue(await this.list(), origin);
  }

  /** Records a revocation; of two for one origin the later one is kept, as it covers the earlier one. */
  add(origin: string, revokedAt: number): Promise<void> {
    return this.#pending.update((pending) => {
      const stored = ownValue(pending, origin);
      return stored !== undefined && stored >= revokedAt ? pending : withKey(pending, origin, revokedAt);
    });
  }

  /** Drops the revocation Core confirmed, unless a later one replaced it meanwhile. */
  confirm(origin: string, revokedAt: number): Promise<void> {
    return this.#pending.update((pending) => (ownValue(pending, origin) === revokedAt ? withoutKey(pending, origin) : pending));
  }
}
