import { afterEach, describe, expect, it, vi } from "vitest";
import type { SessionEvent } from "@pedelec/protocol/session-events";
import type { TokenUsage } from "@pedelec/protocol/token-usage";
import { Pedelec } from "./pedelec.js";
import { FakeExtension, sessionInfo } from "./testing/fake-extension.js";
import type { PedelecEventContext } from "./types.js";

const SESSION_ID = "session-0001";

const usageUpdated = (turnId: string, usage: TokenUsage, sessionUsage: TokenUsage): SessionEvent => ({
  type: "usage-updated",
  turnId,
  usage,
  sessionUsage,
});
const marker = (text: string): SessionEvent => ({ type: "chat-delta", turnId: "turn-9", messageId: "m9", delta: text });

afterEach(() => {
  vi.unstubAllGlobals();
});

describe("session.usage and onUsage", () => {
  it("start empty, take each update's session total, and pass the turn's usage, turn and seq in the context", async () => {
    const extension = new FakeExtension().install();
    const session = await new Pedelec().createSession({ provider: "claude" });
    expect(session.usage).toEqual({});
    const seen: Array<[TokenUsage, PedelecEventContext]> = [];
    session.onUsage((usage, context) => seen.push([usage, context]));
    extension.emit(SESSION_ID, { type: "turn-started", turnId: "turn-1", turnKind: "prepare" });
    extension.emit(SESSION_ID, usageUpdated("turn-1", { inputTokens: 900 }, { inputTokens: 900 }));
    extension.emit(SESSION_ID, usageUpdated("turn-2", { inputTokens: 100, outputTokens: 4 }, { inputTokens: 1_000, outputTokens: 4 }));
    await vi.waitFor(() => expect(seen).toHaveLength(2));
    expect(seen.map(([usage]) => usage)).toEqual([{ inputTokens: 900 }, { inputTokens: 1_000, outputTokens: 4 }]);
    expect(seen[0]?.[1]).toMatchObject({
      source: "core",
      sessionId: SESSION_ID,
      turnId: "turn-1",
      turnKind: "prepare",
      seq: 2,
      turnUsage: { inputTokens: 900 },
    });
    expect(seen[1]?.[1]).toMatchObject({ turnId: "turn-2", seq: 3, turnUsage: { inputTokens: 100, outputTokens: 4 } });
    expect(session.usage).toEqual({ inputTokens: 1_000, outputTokens: 4 });
    expect(session.usage).toBe(seen[1]?.[0]);
    expect(Object.isFrozen(session.usage)).toBe(true);
  });

  it("drops an update whose seq is not newer, never lowers the total, and stops calling once unsubscribed", async () => {
    const extension = new FakeExtension().install();
    const session = await new Pedelec().createSession({ provider: "claude" });
    const totals: Array<number | undefined> = [];
    const stop = session.onUsage((usage) => totals.push(usage.outputTokens));
    const deltas: string[] = [];
    session.onChatDelta((text) => deltas.push(text));
    extension.emit(SESSION_ID, usageUpdated("t", { outputTokens: 10 }, { outputTokens: 10 }), 1);
    extension.emit(SESSION_ID, usageUpdated("t", { outputTokens: 99 }, { outputTokens: 99 }), 1);
    extension.emit(SESSION_ID, usageUpdated("t", { outputTokens: 30 }, { outputTokens: 30 }), 3);
    extension.emit(SESSION_ID, usageUpdated("t", { outputTokens: 20 }, { outputTokens: 20 }), 2);
    // Newer, but the same total: nothing changed, so no call.
    extension.emit(SESSION_ID, usageUpdated("t", { outputTokens: 30 }, { outputTokens: 30 }), 4);
    extension.emit(SESSION_ID, marker("first"), 5);
    await vi.waitFor(() => expect(deltas).toEqual(["first"]));
    expect(totals).toEqual([10, 30]);
    expect(session.lastSeq).toBe(5);
    stop();
    extension.emit(SESSION_ID, usageUpdated("t", { outputTokens: 50 }, { outputTokens: 50 }), 6);
    extension.emit(SESSION_ID, marker("second"), 7);
    await vi.waitFor(() => expect(deltas).toEqual(["first", "second"]));
    expect(totals).toEqual([10, 30]);
    expect(session.usage).toEqual({ outputTokens: 50 });
  });

  it("is restored from the resume answer at once, and replayed updates do not count up again", async () => {
    const extension = new FakeExtension().install();
    extension.emit(SESSION_ID, usageUpdated("turn-1", { inputTokens: 500 }, { inputTokens: 500 }));
    extension.emit(SESSION_ID, usageUpdated("turn-2", { inputTokens: 700 }, { inputTokens: 1_200 }));
    extension.handle("resumeSession", (_request, fake, route) => {
      fake.replay(SESSION_ID, 0, route);
      return sessionInfo({ lastSeq: fake.lastSeqOf(SESSION_ID), usage: { inputTokens: 1_200 } });
    });
    const session = await new Pedelec().resumeSession(SESSION_ID, { afterSeq: 0 });
    expect(session.usage).toEqual({ inputTokens: 1_200 });
    const totals: Array<number | undefined> = [];
    session.onUsage((usage) => totals.push(usage.inputTokens));
    const deltas: string[] = [];
    session.onChatDelta((text) => deltas.push(text));
    extension.emit(SESSION_ID, marker("after the replay"));
    await vi.waitFor(() => expect(deltas).toEqual(["after the replay"]));
    expect(totals).toEqual([]);
    extension.emit(SESSION_ID, usageUpdated("turn-3", { inputTokens: 50 }, { inputTokens: 1_250 }));
    await vi.waitFor(() => expect(totals).toEqual([1_250]));
  });

  it("takes what it missed while the link was down from the re-attach answer", async () => {
    const extension = new FakeExtension().install();
    const session = await new Pedelec().createSession({ provider: "claude" });
    const seen: Array<[TokenUsage, PedelecEventContext]> = [];
    session.onUsage((usage, context) => seen.push([usage, context]));
    const errors: string[] = [];
    session.onError((error) => errors.push(error.code));
    extension.send({ type: "session-interrupted", sessionId: SESSION_ID, error: { code: "CORE_RUNTIME_UNAVAILABLE", message: "Core went away" } });
    await vi.waitFor(() => expect(errors).toEqual(["CORE_RUNTIME_UNAVAILABLE"]));
    extension.handle("resumeSession", () => sessionInfo({ lastSeq: 0, usage: { inputTokens: 42, outputTokens: 2 } }));
    await session.cancel();
    expect(session.usage).toEqual({ inputTokens: 42, outputTokens: 2 });
    expect(seen).toHaveLength(1);
    expect(seen[0]?.[1]).toMatchObject({ source: "core" });
    expect(seen[0]?.[1].seq).toBeUndefined();
  });

  it("treats an answer without usage (an older Desktop) as nothing reported", async () => {
    const extension = new FakeExtension().install();
    extension.handle("resumeSession", () => {
      const { usage: _usage, ...older } = sessionInfo({ lastSeq: 3 });
      return older;
    });
    const session = await new Pedelec().resumeSession(SESSION_ID);
    expect(session.usage).toEqual({});
  });
});
