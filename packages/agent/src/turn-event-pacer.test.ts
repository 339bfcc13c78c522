import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { AgentEvent } from "@pedelec/protocol/agent-wire";
import { TurnEventPacer } from "./turn-event-pacer.js";

let now = 0;
let sent: AgentEvent[];
beforeEach(() => {
  vi.useFakeTimers();
  now = 0;
  sent = [];
});
afterEach(() => {
  vi.useRealTimers();
});

const pacer = (options = {}) => new TurnEventPacer((event) => sent.push(event), { intervalMs: 100, now: () => now, ...options });
const delta = (text: string, messageId = "m1"): AgentEvent => ({ type: "text-delta", messageId, delta: text });

describe("TurnEventPacer", () => {
  it("sends the first piece at once and joins the rest to one delta per interval", () => {
    const events = pacer();
    events.send(delta("a"));
    expect(sent).toEqual([delta("a")]);
    for (let piece = 0; piece < 1000; piece += 1) events.send(delta("b"));
    expect(sent).toHaveLength(1);
    now = 100;
    vi.advanceTimersByTime(100);
    expect(sent).toEqual([delta("a"), delta("b".repeat(1000))]);
  });

  it("sends the joined text before any other event, and per message", () => {
    const events = pacer();
    events.send(delta("a"));
    events.send(delta("b"));
    events.send(delta("c", "m2"));
    events.send({ type: "message-completed", messageId: "m2", text: "c" });
    expect(sent).toEqual([delta("a"), delta("b"), delta("c", "m2"), { type: "message-completed", messageId: "m2", text: "c" }]);
  });

  it("sends a joined delta early when it grows large, and none past the turn's delta budget", () => {
    const events = pacer({ maxDeltaCharacters: 10, maxDeltas: 3 });
    events.send(delta("x"));
    for (let piece = 0; piece < 100; piece += 1) events.send(delta("y"));
    events.flush();
    expect(sent.map((event) => (event.type === "text-delta" ? event.delta : ""))).toEqual(["x", "y".repeat(10), "y".repeat(10)]);
    expect(events.eventsSent).toBe(3);
  });
});
