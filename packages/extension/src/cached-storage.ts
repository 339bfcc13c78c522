import type { KeyValueStorage } from "./key-value-storage.js";

/** What a storage area reports after any context (this worker, a popup, the options page) changed it. */
export type StorageChanges = Record<string, { newValue?: unknown }>;

/**
 * A storage area read through an in-memory copy: every page request consults approvals and pending revocations, and a
 * `chrome.storage` read is a round trip to the browser process. The copy follows the area's change events, which
 * report every write from any of the extension's contexts in the order the browser applied them, and this worker's
 * own writes as soon as they are done. Each read returns a copy, so a caller cannot change what the next one reads.
 */
export class CachedStorage implements KeyValueStorage {
  /** Key → value as last read, written or reported changed; undefined means absent. */
  readonly #values = new Map<string, unknown>();

  constructor(
    private readonly area: KeyValueStorage,
    onChanged: (listener: (changes: StorageChanges) => void) => void,
  ) {
    onChanged((changes) => {
      for (const [key, change] of Object.entries(changes)) this.#values.set(key, change.newValue);
    });
  }

  async get(key: string): Promise<unknown> {
    if (!this.#values.has(key)) {
      const read = await this.area.get(key);
      // A change reported while the read was under way is newer than what the read found.
      if (!this.#values.has(key)) this.#values.set(key, read);
    }
    return structuredClone(this.#values.get(key));
  }

  async set(key: string, value: unknown): Promise<void> {
    await this.area.set(key, value);
    this.#values.set(key, structuredClone(value));
  }
}
