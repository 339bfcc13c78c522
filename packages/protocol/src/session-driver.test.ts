import { describe, expect, it } from "vitest";
import { SessionDriver } from "./session-driver.js";
import type { SessionEvent } from "./session-events.js";
import { sessionMachineState } from "./session-machine.js";

/** A driver whose joining windows close when `closeWindows()` is called, recording what it sends as `seq:type`. */
function driver(options: { mayJoin?: () => boolean; refuse?: (event: SessionEvent) => boolean } = {}) {
  const sent: string[] = [];
  let windows: Array<() => void> = [];
  const session = new SessionDriver({
    state: sessionMachineState({ sessionId: "s1" }),
    later: (callback) => windows.push(callback),
    seal: (seq, event) => {
      if (options.refuse?.(event) === true) throw new Error(`refused ${event.type}`);
      return `${seq}:${event.type === "chat-delta" ? `delta(${event.delta})` : event.type}`;
    },
    send: (sealed) => sent.push(sealed),
    ...(options.mayJoin === undefined ? {} : { mayJoin: options.mayJoin }),
  });
  const closeWindows = () => {
    const closing = windows;
    windows = [];
    for (const close of closing) close();
  };
  return { session, sent, closeWindows };
}

describe("SessionDriver", () => {
  it("sends a waiting delta before the machine's next event, with seqs in order", () => {
    const { session, sent, closeWindows } = driver();
    session.apply({ type: "turn-requested", turnId: "t1", turnKind: "user" });
    session.apply({ type: "turn-began", turnId: "t1" });
    session.pushDelta({ turnId: "t1", messageId: "m1", delta: "a" });
    session.pushDelta({ turnId: "t1", messageId: "m1", delta: "b" });
    session.pushDelta({ turnId: "t1", messageId: "m1", delta: "c" });
    session.apply({ type: "turn-ended", turnId: "t1" });
    closeWindows();
    expect(sent).toEqual(["1:turn-started", "2:status-changed", "3:delta(a)", "4:delta(bc)", "5:status-changed", "6:turn-completed"]);
    expect(session.state.seq).toBe(6);
  });

  it("does not send a waiting delta early for a step without events", () => {
    const { session, sent } = driver();
    session.apply({ type: "turn-requested", turnId: "t1", turnKind: "user" });
    session.apply({ type: "turn-began", turnId: "t1" });
    session.pushDelta({ turnId: "t1", messageId: "m1", delta: "a" });
    session.pushDelta({ turnId: "t1", messageId: "m1", delta: "b" });
    session.apply({ type: "turn-stopping", turnId: "t1" });
    expect(sent).toEqual(["1:turn-started", "2:status-changed", "3:delta(a)"]);
  });

  it("throws a refusal and a refused seal, changing nothing", () => {
    const { session, sent } = driver({ refuse: (event) => event.type === "turn-started" });
    session.apply({ type: "turn-requested", turnId: "t1", turnKind: "user" });
    expect(() => session.apply({ type: "turn-requested", turnId: "t2", turnKind: "user" })).toThrow(/already running a turn/);
    const before = session.state;
    expect(() => session.apply({ type: "turn-began", turnId: "t1" })).toThrow(/refused turn-started/);
    expect(session.state).toBe(before);
    expect(sent).toEqual([]);
  });

  it("drops joined events while they may not go out, and discards what waits", () => {
    let up = true;
    const { session, sent, closeWindows } = driver({ mayJoin: () => up });
    session.pushUsage({ turnId: "t1", usage: { outputTokens: 1 }, sessionUsage: { outputTokens: 1 } });
    session.pushUsage({ turnId: "t1", usage: { outputTokens: 2 }, sessionUsage: { outputTokens: 2 } });
    session.discardUsage();
    closeWindows();
    up = false;
    session.pushDelta({ turnId: "t1", messageId: "m1", delta: "lost" });
    expect(sent).toEqual(["1:usage-updated"]);
    expect(session.infoFields()).toEqual({ status: "idle", lastSeq: 1, activeTurn: null, pendingToolCalls: [] });
  });
});
