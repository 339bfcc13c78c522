import { z } from "zod";
import type { KeyValueStorage } from "./key-value-storage.js";
import { ownValue, withKey, withoutKey } from "./own-record.js";
import { StoredValue } from "./stored-value.js";

/** The `chrome.storage.local` key holding the approved origins. */
export const APPROVED_ORIGINS_KEY = "approvedOrigins";
/** The `chrome.storage.local` key holding, per approved origin, when it was approved (ms since the epoch). */
export const APPROVAL_TIMES_KEY = "approvalTimes";

export interface ApprovalStoreOptions {
  /** The clock approval times come from. */
  now?: () => number;
}

const timesSchema = z.record(z.string(), z.number().int().min(0));

/**
 * The origins the user approved, and when, kept in extension storage. Storage failures surface as STORAGE_ERROR.
 * The time goes into Full Access claims, so Core can check that approval came before the Full Access grant.
 */
export class ApprovalStore {
  readonly #origins: StoredValue<string[]>;
  readonly #times: StoredValue<Record<string, number>>;
  readonly #now: () => number;

  constructor(storage: KeyValueStorage, options: ApprovalStoreOptions = {}) {
    this.#origins = new StoredValue(storage, APPROVED_ORIGINS_KEY, z.array(z.string()), () => [], "the approved origins");
    this.#times = new StoredValue(storage, APPROVAL_TIMES_KEY, timesSchema, () => ({}), "the approval times");
    this.#now = options.now ?? Date.now;
  }

  list(): Promise<string[]> {
    return this.#origins.read();
  }

  async isApproved(origin: string): Promise<boolean> {
    return (await this.list()).includes(origin);
  }

  /** Approves `origin`. An origin approved already keeps its first approval time. */
  async approve(origin: string): Promise<void> {
    let wasApproved = false;
    // Queued at once, so overlapping approvals and revocations apply in the order they were made.
    await this.#origins.update((origins) => {
      wasApproved = origins.includes(origin);
      return wasApproved ? origins : [...origins, origin];
    });
    // A time left by an earlier approval whose revocation was not fully written is replaced, not reused.
    await this.#times.update((times) => (wasApproved && ownValue(times, origin) !== undefined ? times : withKey(times, origin, this.#now())));
  }

  async revoke(origin: string): Promise<void> {
    await this.#origins.update((origins) => origins.filter((candidate) => candidate !== origin));
    await this.#times.update((times) => withoutKey(times, origin));
  }

  /**
   * When `origin` was approved, or undefined when it is not approved. An origin approved before times were kept gets
   * the time it is first asked about, stored, so every later claim names the same time.
   */
  async approvedAt(origin: string): Promise<number | undefined> {
    if (!(await this.isApproved(origin))) return undefined;
    const known = ownValue(await this.#times.read(), origin);
    if (known !== undefined) return known;
    await this.#times.update((times) => (ownValue(times, origin) === undefined ? withKey(times, origin, this.#now()) : times));
    return ownValue(await this.#times.read(), origin);
  }
}
