import { describe, expect, it } from "vitest";
import { SessionEventContexts } from "./session-event-context.js";

describe("session event contexts", () => {
  it("names Core's event with its seq and time, and the turn with its kind", () => {
    const contexts = new SessionEventContexts("s1", "claude");
    contexts.noteTurn("t1", "prepare");
    const envelope = {
      type: "event" as const,
      sessionId: "s1",
      seq: 7,
      emittedAt: "2026-01-01T00:00:00.000Z",
      event: { type: "session-ended" as const, reason: "requested" as const },
    };
    expect(contexts.core({ turnId: "t1", messageId: "m1" }, envelope)).toEqual({
      sessionId: "s1",
      provider: "claude",
      source: "core",
      eventEmittedAt: "2026-01-01T00:00:00.000Z",
      seq: 7,
      turnId: "t1",
      turnKind: "prepare",
      messageId: "m1",
    });
    const sdk = contexts.sdk({ turnId: "t2", turnUsage: { totalTokens: 3 } });
    expect(sdk).toMatchObject({ source: "sdk", turnId: "t2", turnUsage: { totalTokens: 3 } });
    expect(sdk.turnKind).toBeUndefined();
    expect(Object.isFrozen(sdk.turnUsage)).toBe(true);
  });

  it("remembers the newest 64 turns, a turn noted again as the newest", () => {
    const contexts = new SessionEventContexts("s1", "claude");
    for (let index = 0; index < 64; index += 1) contexts.noteTurn(`t${index}`, "user");
    contexts.noteTurn("t0", "user");
    contexts.noteTurn("t64", "user");
    expect(contexts.turnKind("t0")).toBe("user");
    expect(contexts.turnKind("t1")).toBeUndefined();
    expect([...contexts.turnIds()]).toHaveLength(64);
    contexts.forgetTurn("t64");
    expect(contexts.turnKind("t64")).toBeUndefined();
  });
});
