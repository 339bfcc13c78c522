import { describe, expect, it } from "vitest";
import { MAX_CORE_FRAME_BYTES } from "@pedelec/protocol/core-wire";
import type { SessionEventEnvelope } from "@pedelec/protocol/session-events";
import { eventFrameProblem } from "./event-frame-check.js";
import type { ProviderAdapter } from "./providers/provider-adapter.js";
import { Session } from "./session.js";
import { scriptedSessionSetup } from "./testing/scripted-session.js";

function envelopeWith(text: string): SessionEventEnvelope {
  return {
    type: "event",
    sessionId: "session-0001",
    seq: 1,
    emittedAt: new Date(0).toISOString(),
    event: { type: "chat-completed", turnId: "t1", messageId: "m1", text },
  };
}

describe("eventFrameProblem", () => {
  it("accepts an event that fits one Core frame and names why a larger one does not", () => {
    expect(eventFrameProblem(envelopeWith("hello"))).toBeUndefined();
    expect(eventFrameProblem(envelopeWith("x".repeat(MAX_CORE_FRAME_BYTES)))).toMatch(/takes \d+ bytes and a frame holds 16777216/);
  });

  it("names a value JSON.stringify cannot write out", () => {
    // A BigInt throws on every Node line; deep nesting no longer does on Node 26, whose JSON.stringify does not recurse.
    const envelope = envelopeWith("");
    envelope.event = { type: "tool-call-requested", turnId: "t1", toolRequestId: "r1", toolName: "x", args: { count: 1n } as never, timeoutMs: 1 };
    expect(eventFrameProblem(envelope)).toMatch(/cannot be written as JSON/);
  });
});

describe("Session event sequence", () => {
  it("sends an error in place of an event too large to send, so seq has no gap", async () => {
    const published: SessionEventEnvelope[] = [];
    const adapter = {
      displayName: "Stand-in",
      capabilities: { textDeltas: true, resume: true },
      runTurn: async (_request: unknown, onEvent: (event: unknown) => void) => {
        onEvent({ type: "message-completed", messageId: "m1", text: "x".repeat(MAX_CORE_FRAME_BYTES + 1) });
        onEvent({ type: "message-completed", messageId: "m2", text: "still here" });
        return { ok: true };
      },
    } as unknown as ProviderAdapter;
    const setup = scriptedSessionSetup(adapter, published);
    const session = new Session(setup);
    session.startTurn("t1", "hi");
    await expect.poll(() => published.some((envelope) => envelope.event.type === "turn-completed")).toBe(true);
    expect(published.map((envelope) => envelope.seq)).toEqual(published.map((_, index) => index + 1));
    const types = published.map((envelope) => envelope.event.type);
    expect(types).toEqual(["turn-started", "status-changed", "error-reported", "chat-completed", "status-changed", "turn-completed"]);
    expect(published[2]?.event).toMatchObject({
      turnId: "t1",
      error: { code: "MESSAGE_TOO_LARGE", message: expect.stringContaining("chat-completed") as string },
    });
    expect(session.info().lastSeq).toBe(published.length);
  });
});
