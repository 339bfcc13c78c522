import type { SessionInfo } from "@pedelec/protocol/requests";
import type { SessionEventEnvelope } from "@pedelec/protocol/session-events";
import type { StoredSession } from "./session-store/session-store.js";

/**
 * What the store's row says after an event: the status, the running turn, the tokens used, the activity time (set by
 * the store).
 */
export function storedPatchFor(envelope: SessionEventEnvelope): Partial<StoredSession> {
  const { event } = envelope;
  switch (event.type) {
    case "status-changed":
      return { status: event.status };
    case "turn-started":
      return { activeTurn: { turnId: event.turnId, turnKind: event.turnKind } };
    case "turn-completed":
    case "turn-failed":
      return { activeTurn: null };
    case "usage-updated":
      // The total survives a restart with the row; the next Core's session goes on adding to it.
      return { usage: event.sessionUsage };
    default:
      return {};
  }
}

/** What a page is told of a stored session that ended (or is ended without being rebuilt). */
export function endedInfoOf(record: StoredSession): SessionInfo {
  return {
    sessionId: record.sessionId,
    provider: record.provider,
    effortLevel: record.effortLevel,
    effort: record.effort,
    model: record.model,
    sessionCreatedAt: record.createdAt,
    status: "ended",
    workspace: record.workspace,
    access: record.access,
    autoEndOnDisconnect: record.autoEndOnDisconnect,
    toolNames: record.tools.map((tool) => tool.name),
    lastSeq: record.lastSeq,
    activeTurn: null,
    pendingToolCalls: [],
    usage: record.usage,
  };
}
