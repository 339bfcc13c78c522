/** A `chrome.storage` area reduced to what the extension needs, so stores can be tested with a Map. */
export interface KeyValueStorage {
  get(key: string): Promise<unknown>;
  set(key: string, value: unknown): Promise<void>;
}
