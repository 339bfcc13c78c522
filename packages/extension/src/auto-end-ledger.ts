import { z } from "zod";
import { sessionIdSchema } from "@pedelec/protocol/domain";
import { pageOriginSchema } from "@pedelec/protocol/origin";
import type { KeyValueStorage } from "./key-value-storage.js";
import { consoleLogger, type Logger } from "./logger.js";

/** The `chrome.storage.session` key listing routed sessions that end when their page goes. */
export const AUTO_END_SESSIONS_KEY = "autoEndSessions";

export interface AutoEndEntry {
  sessionId: string;
  origin: string;
}

const storedEntriesSchema = z.array(z.object({ sessionId: sessionIdSchema, origin: pageOriginSchema }));

/**
 * A copy of the routed auto-end sessions in session storage. If the worker restarts, every page route died with it,
 * so whatever the copy lists is an orphan the new worker should end. Best effort: storage errors are only logged.
 */
export class AutoEndLedger {
  #writes: Promise<void> = Promise.resolve();

  constructor(
    private readonly storage: KeyValueStorage,
    private readonly logger: Logger = consoleLogger,
  ) {}

  /** Replaces the stored list. Writes run in call order, so the last call wins. */
  record(entries: readonly AutoEndEntry[]): Promise<void> {
    const snapshot = entries.map(({ sessionId, origin }) => ({ sessionId, origin }));
    return this.#enqueue(() => this.storage.set(AUTO_END_SESSIONS_KEY, snapshot));
  }

  /** Reads what a previous worker left and clears it. Call it before the first `record`. */
  takeOrphans(): Promise<AutoEndEntry[]> {
    let orphans: AutoEndEntry[] = [];
    return this.#enqueue(async () => {
      const parsed = storedEntriesSchema.safeParse(await this.storage.get(AUTO_END_SESSIONS_KEY));
      orphans = parsed.success ? parsed.data : [];
      await this.storage.set(AUTO_END_SESSIONS_KEY, []);
    }).then(() => orphans);
  }

  #enqueue(write: () => Promise<void>): Promise<void> {
    const next = this.#writes.then(write).catch((error: unknown) => {
      this.logger.warn("STORAGE_ERROR", "could not update the auto-end session list", error);
    });
    this.#writes = next;
    return next;
  }
}
