import { z } from "zod";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import type { KeyValueStorage } from "./key-value-storage.js";
import { randomBase64Url } from "./random-id.js";
import { StoredValue } from "./stored-value.js";

/** The `chrome.storage.local` key holding this install's instance id. */
export const INSTANCE_ID_KEY = "instanceId";

const instanceIdSchema = z.string().regex(/^[A-Za-z0-9_-]{22,43}$/);

/**
 * A random id naming this install of the extension, made on first need and kept. The native host puts it in every
 * Full Access attestation, so Core can tell one browser profile's grants from another's.
 */
export class InstanceIdStore {
  readonly #id: StoredValue<string | null>;

  constructor(
    storage: KeyValueStorage,
    private readonly createId: () => string = () => randomBase64Url(32),
  ) {
    this.#id = new StoredValue(storage, INSTANCE_ID_KEY, instanceIdSchema.nullable(), () => null, "the instance id");
  }

  /** The stored id, or a new one stored first. Two callers at once get the same id: the write is queued. */
  async get(): Promise<string> {
    const stored = await this.#id.read();
    if (stored !== null) return stored;
    await this.#id.update((current) => current ?? instanceIdSchema.parse(this.createId()));
    const created = await this.#id.read();
    if (created === null) throw new PedelecError("STORAGE_ERROR", "the new instance id was not kept by storage");
    return created;
  }
}
