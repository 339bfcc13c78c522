import { log } from "./logger.js";
import type { RestoredSessionState, Session } from "./session.js";
import type { SessionStore, StoredSession } from "./session-store/session-store.js";

/** What start-up found in the store. */
export interface RestoreReport {
  /** Sessions that are resumable again. */
  restored: number;
  /** Of those, sessions whose turn was running when the earlier Core stopped; that turn ended with SESSION_ERROR. */
  interrupted: number;
  /** Sessions unused longer than the retention setting, ended now. */
  expired: number;
}

/** What the session manager does with each stored session a restore goes through. */
export interface RestoreTarget {
  /** Remembers a session that had ended, so its page is told "ended". */
  rememberEnded(record: StoredSession): void;
  /** Ends an open session that is not rebuilt: expired, or it could not be rebuilt. */
  endExpired(record: StoredSession): void;
  /** Rebuilds an open session with what the store kept of it; a failure ends it instead. */
  rebuild(record: StoredSession, restored: RestoredSessionState): Promise<Session>;
}

/**
 * Goes through the sessions an earlier Core left in `store`: ended ones are remembered, open ones last used before
 * `expiredBefore` (ms since the epoch) end, the others are rebuilt, and a turn that was running then ends with
 * SESSION_ERROR.
 */
export async function restoreStoredSessions(store: SessionStore, expiredBefore: number, target: RestoreTarget): Promise<RestoreReport> {
  const report: RestoreReport = { restored: 0, interrupted: 0, expired: 0 };
  for (const record of store.listEnded()) target.rememberEnded(record);
  for (const record of store.listOpen()) {
    if (Date.parse(record.lastActivityAt) < expiredBefore) {
      target.endExpired(record);
      report.expired += 1;
      continue;
    }
    let session: Session;
    try {
      session = await target.rebuild(record, {
        createdAt: record.createdAt,
        lastSeq: record.lastSeq,
        // An interrupted turn's session goes to "error" through failInterruptedTurn, so the change is stored and sent.
        status: record.status,
        providerSessionId: record.providerSessionId,
        startedTurn: (turnId) => store.startedTurn(record.sessionId, turnId),
        usage: record.usage,
      });
    } catch (error) {
      log("warn", "could not restore a stored session; it was ended", { sessionId: record.sessionId, error: String(error) });
      target.endExpired(record);
      report.expired += 1;
      continue;
    }
    report.restored += 1;
    if (record.activeTurn !== null) {
      session.failInterruptedTurn(record.activeTurn);
      report.interrupted += 1;
    }
  }
  return report;
}
