import type { SessionEventEnvelope } from "@pedelec/protocol/session-events";
import type { StoredSession } from "../session-store.js";

/** A stored session with every field set to something other than its default, so a lost field shows. */
export function storedSession(sessionId: string, overrides: Partial<StoredSession> = {}): StoredSession {
  return {
    sessionId,
    origin: "https://app.example.com",
    provider: "claude",
    model: "opus-4",
    effortLevel: "high",
    effort: null,
    effortArgv: ["--effort", "high", "--verbose"],
    access: "full",
    autoEndOnDisconnect: false,
    workspace: { path: "/srv/projects/board", managed: false },
    guidance: "Keep the board tidy — 整理看板.\nUse the tools.",
    tools: [
      {
        name: "board.add-card",
        description: "Adds a card",
        argsSchema: {
          type: "object",
          properties: { title: { type: "string", maxLength: 80 }, tags: { type: "array", items: { type: "string" } } },
          required: ["title"],
        },
        timeoutMs: 5_000,
      },
    ],
    executablePath: "/usr/local/bin/claude",
    providerSessionId: "conversation-7",
    status: "waiting_tool_result",
    activeTurn: { turnId: "turn-3", turnKind: "prepare" },
    usage: { inputTokens: 48_210, outputTokens: 1_377, cachedInputTokens: 40_960, totalTokens: 49_587 },
    createdAt: "2025-03-01T10:00:00.000Z",
    lastActivityAt: "2025-03-01T10:05:00.000Z",
    endedAt: null,
    endReason: null,
    lastSeq: 0,
    ...overrides,
  };
}

/** A chat-delta event of a session, emitted at a time derived from its seq. */
export function chatDelta(sessionId: string, seq: number, delta = `part ${seq}`): SessionEventEnvelope {
  return {
    type: "event",
    sessionId,
    seq,
    emittedAt: new Date(Date.UTC(2025, 2, 1, 11) + seq * 1_000).toISOString(),
    event: { type: "chat-delta", turnId: "turn-3", messageId: "message-1", delta },
  };
}
