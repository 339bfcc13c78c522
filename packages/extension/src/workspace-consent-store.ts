import { z } from "zod";
import type { KeyValueStorage } from "./key-value-storage.js";
import { StoredValue } from "./stored-value.js";

/** The `chrome.storage.local` key holding, per origin, the folders the user let that origin's agent work in. */
export const WORKSPACE_CONSENTS_KEY = "workspaceConsents";

/** Origin → consented folders (normalized paths, see workspace-path.ts). */
export type WorkspaceConsents = Record<string, string[]>;

const consentsSchema = z.record(z.string(), z.array(z.string()));

/**
 * The user's folder consents: a page may start a session in an explicit `workspace.path` only if the user allowed
 * that origin to use that folder. Paths are compared exactly, so callers store and look up normalized paths.
 */
export class WorkspaceConsentStore {
  readonly #consents: StoredValue<WorkspaceConsents>;

  constructor(storage: KeyValueStorage) {
    this.#consents = new StoredValue(storage, WORKSPACE_CONSENTS_KEY, consentsSchema, () => ({}), "the folder consents");
  }

  list(): Promise<WorkspaceConsents> {
    return this.#consents.read();
  }

  async isAllowed(origin: string, path: string): Promise<boolean> {
    const consents = await this.list();
    return Object.hasOwn(consents, origin) && (consents[origin] ?? []).includes(path);
  }

  allow(origin: string, path: string): Promise<void> {
    return this.#consents.update((consents) => {
      const paths = Object.hasOwn(consents, origin) ? (consents[origin] ?? []) : [];
      return paths.includes(path) ? consents : { ...consents, [origin]: [...paths, path] };
    });
  }

  revoke(origin: string, path: string): Promise<void> {
    return this.#consents.update((consents) => {
      if (!Object.hasOwn(consents, origin)) return consents;
      const paths = (consents[origin] ?? []).filter((candidate) => candidate !== path);
      return paths.length > 0 ? { ...consents, [origin]: paths } : withoutOrigin(consents, origin);
    });
  }

  /** Drops every folder of `origin`, as when its approval is revoked. */
  revokeOrigin(origin: string): Promise<void> {
    return this.#consents.update((consents) => withoutOrigin(consents, origin));
  }
}

function withoutOrigin(consents: WorkspaceConsents, origin: string): WorkspaceConsents {
  return Object.fromEntries(Object.entries(consents).filter(([candidate]) => candidate !== origin));
}
