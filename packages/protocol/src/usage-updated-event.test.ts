import { describe, expect, it } from "vitest";
import { coreServerFrameSchema } from "./core-wire.js";
import { extensionToPageMessageSchema } from "./page-wire.js";
import { sessionInfoSchema } from "./requests.js";
import { sessionEventEnvelopeSchema, sessionEventSchema } from "./session-events.js";

const usageUpdated = {
  type: "usage-updated",
  turnId: "turn-1",
  usage: { inputTokens: 1_200, cachedInputTokens: 1_000, outputTokens: 30, totalTokens: 1_230 },
  sessionUsage: { inputTokens: 5_000, cachedInputTokens: 4_000, outputTokens: 300, totalTokens: 5_300 },
};
const envelope = { type: "event", sessionId: "session-1", seq: 7, emittedAt: "2026-12-01T10:00:00.000Z", event: usageUpdated };

describe("the usage-updated event", () => {
  it("passes every hop's check: Core's frame, the envelope, the extension's message to the page", () => {
    expect(sessionEventSchema.parse(usageUpdated)).toEqual(usageUpdated);
    expect(sessionEventEnvelopeSchema.parse(envelope)).toEqual(envelope);
    expect(coreServerFrameSchema.parse({ kind: "event", envelope })).toEqual({ kind: "event", envelope });
    expect(extensionToPageMessageSchema.parse(envelope)).toEqual(envelope);
    // A provider that reports only some counts, or none yet for the session, is fine.
    expect(sessionEventSchema.safeParse({ ...usageUpdated, usage: { outputTokens: 1 }, sessionUsage: {} }).success).toBe(true);
  });

  it.each([
    ["a negative count", { usage: { inputTokens: -1 } }],
    ["a fractional count", { sessionUsage: { outputTokens: 1.5 } }],
    ["a count beyond the largest safe integer", { sessionUsage: { totalTokens: Number.MAX_SAFE_INTEGER + 1 } }],
    ["a count that is not a number", { usage: { inputTokens: "12" } }],
    ["no turn", { turnId: undefined }],
    ["no session total", { sessionUsage: undefined }],
  ])("is refused with %s", (_name, change) => {
    expect(sessionEventSchema.safeParse({ ...usageUpdated, ...change }).success).toBe(false);
    expect(extensionToPageMessageSchema.safeParse({ ...envelope, event: { ...usageUpdated, ...change } }).success).toBe(false);
  });
});

describe("SessionInfo.usage", () => {
  const info = {
    sessionId: "session-1",
    provider: "claude",
    effortLevel: "medium",
    model: null,
    sessionCreatedAt: "2026-12-01T10:00:00.000Z",
    status: "idle",
    workspace: { path: "/tmp/w", managed: true },
    access: "sandbox",
    autoEndOnDisconnect: true,
    toolNames: [],
    lastSeq: 7,
    activeTurn: null,
    pendingToolCalls: [],
  };

  it("carries the session's total, and may be absent (a Core older than usage reporting)", () => {
    expect(sessionInfoSchema.parse({ ...info, usage: usageUpdated.sessionUsage }).usage).toEqual(usageUpdated.sessionUsage);
    expect(sessionInfoSchema.parse(info).usage).toBeUndefined();
    expect(sessionInfoSchema.safeParse({ ...info, usage: { inputTokens: -3 } }).success).toBe(false);
  });
});
