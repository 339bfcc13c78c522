import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { SESSION_STATUSES } from "./domain.js";
import type { SessionEvent } from "./session-events.js";
import { sessionMachineState, stepSession, type SessionMachineInput, type SessionMachineState, type SessionStep } from "./session-machine.js";
import { cancelled, liveStartStatus, machineInputs, pendingCall, providerFailed, toolCallIds } from "./testing/session-machine-inputs.js";
import { SESSION_STATUS_TRIGGERS, SESSION_TRANSITIONS, isBusySessionStatus, statusAfterLinkLost } from "./session-transitions.js";

const call = pendingCall;

/** Runs `inputs` from `state`, failing on a refusal, and returns the final state and every event's type (status events as `status:<status>`). */
function run(inputs: readonly SessionMachineInput[], state: SessionMachineState = sessionMachineState({ sessionId: "s1" })) {
  const events: SessionEvent[] = [];
  for (const input of inputs) {
    const step = stepSession(state, input);
    if (step.refusal !== undefined) throw step.refusal;
    state = step.state;
    events.push(...step.events.map((numbered) => numbered.event));
  }
  const names = events.map((event) => (event.type === "status-changed" ? `status:${event.status}` : event.type));
  return { state, events, names };
}

const startTurn = (turnId = "t1"): SessionMachineInput[] => [
  { type: "turn-requested", turnId, turnKind: "user" },
  { type: "turn-began", turnId },
];

describe("the session status table", () => {
  it("has a row for every status and names only known triggers and statuses", () => {
    expect(Object.keys(SESSION_TRANSITIONS).sort()).toEqual([...SESSION_STATUSES].sort());
    for (const row of Object.values(SESSION_TRANSITIONS)) {
      for (const [trigger, next] of Object.entries(row)) {
        expect(SESSION_STATUS_TRIGGERS).toContain(trigger);
        expect(SESSION_STATUSES).toContain(next);
      }
    }
  });

  it("keeps ended final and lets error start the next turn", () => {
    expect(SESSION_TRANSITIONS.ended).toEqual({});
    expect(SESSION_TRANSITIONS.error["turn-started"]).toBe("running");
  });

  it("waits only while a turn runs, and runs again when the last call settles", () => {
    expect(SESSION_TRANSITIONS.running["tool-call-requested"]).toBe("waiting_tool_result");
    expect(SESSION_TRANSITIONS.waiting_tool_result["tool-calls-drained"]).toBe("running");
    expect(SESSION_TRANSITIONS.idle["tool-call-requested"]).toBeUndefined();
    expect(SESSION_TRANSITIONS.running["tool-calls-drained"]).toBeUndefined();
  });

  it("calls running and waiting busy, and nothing else", () => {
    expect(SESSION_STATUSES.filter(isBusySessionStatus)).toEqual(["running", "waiting_tool_result"]);
  });

  it("shows error on a page whose link broke while busy or during its own turn, else what it showed", () => {
    expect(SESSION_STATUSES.map((status) => statusAfterLinkLost(status, false))).toEqual(["idle", "error", "error", "ended", "error"]);
    expect(statusAfterLinkLost("idle", true)).toBe("error");
  });
});

describe("the session machine", () => {
  it("runs a turn: turn-started, running, then idle before turn-completed", () => {
    const { names, state } = run([...startTurn(), { type: "turn-ended", turnId: "t1" }]);
    expect(names).toEqual(["turn-started", "status:running", "status:idle", "turn-completed"]);
    expect(state.activeTurn).toBeNull();
    expect(state.seq).toBe(4);
  });

  it("leaves a cancelled turn idle, a failed one in error, and a turn failing as the session ends to the end", () => {
    expect(run([...startTurn(), { type: "turn-ended", turnId: "t1", error: cancelled }]).state.status).toBe("idle");
    expect(run([...startTurn(), { type: "turn-ended", turnId: "t1", error: providerFailed }]).state.status).toBe("error");
    const ending = run([
      ...startTurn(),
      { type: "session-ending" },
      { type: "turn-ended", turnId: "t1", error: { code: "SESSION_ENDED", message: "ended" } },
      { type: "session-ended", reason: "requested" },
    ]);
    expect(ending.names).toEqual(["turn-started", "status:running", "turn-failed", "status:ended", "session-ended"]);
  });

  it("accepts a turn id once, also after the turn is over, and refuses a second active turn", () => {
    let state = run([...startTurn(), { type: "turn-ended", turnId: "t1" }]).state;
    const again = stepSession(state, { type: "turn-requested", turnId: "t1", turnKind: "user" });
    expect(again.outcome).toBe("started-before");
    expect(again.state).toBe(state);
    state = run(startTurn("t2"), state).state;
    expect(stepSession(state, { type: "turn-requested", turnId: "t3", turnKind: "user" }).refusal?.code).toBe("SESSION_BUSY");
    const earlier = stepSession(sessionMachineState({ sessionId: "s1" }), {
      type: "turn-requested",
      turnId: "t9",
      turnKind: "user",
      startedEarlier: (turnId) => turnId === "t9",
    });
    expect(earlier.outcome).toBe("started-before");
  });

  it("prepares only a fresh session whose provider keeps a conversation", () => {
    const fresh = sessionMachineState({ sessionId: "s1" });
    expect(stepSession(fresh, { type: "turn-requested", turnId: "p1", turnKind: "prepare", canPrepare: true }).outcome).toBe("accepted");
    expect(stepSession(fresh, { type: "turn-requested", turnId: "p1", turnKind: "prepare", canPrepare: false }).outcome).toBe("nothing-to-prepare");
    const used = sessionMachineState({ sessionId: "s1", seq: 7, hadTurn: true });
    expect(stepSession(used, { type: "turn-requested", turnId: "p1", turnKind: "prepare", canPrepare: true }).outcome).toBe("nothing-to-prepare");
  });

  it("refuses everything but a known turn id once the session is ending", () => {
    const state = run([...startTurn(), { type: "session-ending" }]).state;
    expect(stepSession(state, { type: "turn-requested", turnId: "t2", turnKind: "user" }).refusal?.code).toBe("SESSION_ENDED");
    expect(stepSession(state, { type: "turn-requested", turnId: "t1", turnKind: "user" }).outcome).toBe("started-before");
    expect(stepSession(state, { type: "session-ending" }).outcome).toBe(false);
  });

  it("ends a turn its shell gave up on with the session, leaving no call waiting", () => {
    const { names, state } = run([
      ...startTurn(),
      { type: "tool-call-requested", call: call("r1") },
      { type: "session-ending" },
      { type: "session-ended", reason: "requested" },
    ]);
    expect(names.slice(-2)).toEqual(["status:ended", "session-ended"]);
    expect(state.activeTurn).toBeNull();
    expect(state.toolCalls.waiting).toEqual([]);
    expect(stepSession(state, { type: "tool-call-answered", toolRequestId: "r1" }).refusal?.code).toBe("SESSION_ENDED");
  });

  it("waits for a tool call and runs again once the page answers", () => {
    const { names, state } = run([
      ...startTurn(),
      { type: "tool-call-requested", call: call("r1") },
      { type: "tool-call-claimed", toolRequestId: "r1", claimant: "tab-a" },
      { type: "tool-call-answered", toolRequestId: "r1", claimant: "tab-a" },
    ]);
    expect(names).toEqual([
      "turn-started",
      "status:running",
      "tool-call-requested",
      "status:waiting_tool_result",
      "tool-call-settled",
      "status:running",
    ]);
    expect(state.toolCalls.waiting).toEqual([]);
  });

  it("gives a call to its first claimant and refuses the others' results", () => {
    const state = run([...startTurn(), { type: "tool-call-requested", call: call("r1") }]).state;
    const claimed = stepSession(state, { type: "tool-call-claimed", toolRequestId: "r1", claimant: "tab-a" });
    expect(claimed.outcome).toBe("claimed");
    expect(stepSession(claimed.state, { type: "tool-call-claimed", toolRequestId: "r1", claimant: "tab-a" }).outcome).toBe("claimed-before");
    expect(stepSession(claimed.state, { type: "tool-call-claimed", toolRequestId: "r1", claimant: "tab-b" }).outcome).toBe("held-by-another");
    expect(stepSession(claimed.state, { type: "tool-call-answered", toolRequestId: "r1", claimant: "tab-b" }).refusal?.code).toBe(
      "TOOL_CALL_CLAIMED",
    );
    expect(stepSession(claimed.state, { type: "tool-call-answered", toolRequestId: "r1" }).refusal?.code).toBe("TOOL_CALL_CLAIMED");
  });

  it("refuses a late result with the reason the call settled", () => {
    const timedOut = run([
      ...startTurn(),
      { type: "tool-call-requested", call: call("r1") },
      { type: "tool-call-settled", toolRequestId: "r1", outcome: "timed-out" },
    ]);
    expect(stepSession(timedOut.state, { type: "tool-call-answered", toolRequestId: "r1" }).refusal?.code).toBe("TOOL_TIMEOUT");
    const unknown = stepSession(timedOut.state, { type: "tool-call-claimed", toolRequestId: "nope", claimant: "tab-a" });
    expect(unknown.refusal?.code).toBe("TOOL_CALL_NOT_PENDING");
  });

  it("does not run again after the calls of a stopping turn settle", () => {
    const { names, state } = run([
      ...startTurn(),
      { type: "tool-call-requested", call: call("r1") },
      { type: "tool-call-requested", call: call("r2") },
      { type: "turn-stopping", turnId: "t1" },
      { type: "tool-call-settled", toolRequestId: "r1", outcome: "cancelled" },
      { type: "tool-call-settled", toolRequestId: "r2", outcome: "cancelled" },
    ]);
    expect(names.slice(-2)).toEqual(["tool-call-settled", "tool-call-settled"]);
    expect(state.status).toBe("waiting_tool_result");
  });

  it("requests a released claim again, with a new seq", () => {
    const { events, state } = run([
      ...startTurn(),
      { type: "tool-call-requested", call: call("r1") },
      { type: "tool-call-claimed", toolRequestId: "r1", claimant: "tab-a" },
      { type: "tool-claims-released", isGone: (claimant) => claimant === "tab-a" },
    ]);
    expect(events.at(-1)).toEqual({ type: "tool-call-requested", ...call("r1") });
    expect(state.toolCalls.waiting).toEqual([{ call: call("r1"), claimant: undefined }]);
  });

  it("fails a turn an earlier Core left running, in error", () => {
    const restored = sessionMachineState({ sessionId: "s1", status: "running", seq: 12, hadTurn: true });
    const { events, state } = run([{ type: "interrupted-turn-failed", turnId: "t1", turnKind: "user", error: providerFailed }], restored);
    expect(events.map((event) => event.type)).toEqual(["status-changed", "turn-failed"]);
    expect(state).toMatchObject({ status: "error", seq: 14 });
  });

  it("drops the turn and its calls without a word when the runtime is lost, keeping the status", () => {
    const before = run([...startTurn(), { type: "tool-call-requested", call: call("r1") }]).state;
    const lost = stepSession(before, { type: "core-lost", outcome: "abandoned" });
    expect(lost.events).toEqual([]);
    expect(lost.outcome).toEqual({ turn: { turnId: "t1", turnKind: "user", begun: true, stopping: false }, calls: [call("r1")] });
    expect(lost.state).toMatchObject({ status: "waiting_tool_result", activeTurn: null, seq: before.seq });
    expect(stepSession(lost.state, { type: "tool-call-answered", toolRequestId: "r1" }).refusal?.code).toBe("TOOL_CALL_NOT_PENDING");
  });
});

describe("the session machine, on random inputs", () => {
  it("never reaches an undefined transition, numbers events without gaps, settles each call and accepts each turn id once", () => {
    fc.assert(
      fc.property(liveStartStatus, fc.nat({ max: 20 }), fc.array(machineInputs(), { maxLength: 60 }), (status, seq, makers) => {
        let state = sessionMachineState({ sessionId: "s1", status, seq });
        const { made, next } = toolCallIds();
        const settledCalls = new Set<string>();
        const acceptedTurns = new Set<string>();
        const startedTurns = new Set<string>();
        let sessionEndedAt: number | undefined;
        for (const make of makers) {
          const input = make(made, next);
          const before = state;
          // An undefined transition throws: fast-check reports the inputs that got there.
          const step: SessionStep = stepSession(state, input);
          state = step.state;
          if (step.refusal !== undefined) {
            expect(state).toBe(before);
            continue;
          }
          expect(step.events.map((event) => event.seq)).toEqual(step.events.map((_, index) => before.seq + index + 1));
          expect(state.seq).toBe(before.seq + step.events.length);
          if (input.type === "turn-requested" && step.outcome === "accepted") {
            expect(acceptedTurns.has(input.turnId)).toBe(false);
            acceptedTurns.add(input.turnId);
          }
          let status = before.status;
          for (const { event, seq: eventSeq } of step.events) {
            // The machine's own events end with session-ended (what a shell publishes through it is its own affair).
            if (sessionEndedAt !== undefined && input.type !== "event-published") {
              throw new Error(`event ${event.type} (seq ${eventSeq}) after session-ended`);
            }
            if (event.type === "status-changed") {
              expect(event.status).not.toBe(status);
              status = event.status;
            }
            if (event.type === "tool-call-settled") {
              expect(settledCalls.has(event.toolRequestId)).toBe(false);
              settledCalls.add(event.toolRequestId);
            }
            if (event.type === "turn-started") {
              expect(startedTurns.has(event.turnId)).toBe(false);
              startedTurns.add(event.turnId);
            }
            if (event.type === "session-ended") sessionEndedAt = eventSeq;
          }
          expect(status).toBe(state.status);
          // Calls wait only in a turn that runs; a busy status has a turn (or one the store last knew of).
          for (const entry of state.toolCalls.waiting) expect(entry.call.turnId).toBe(state.activeTurn?.turnId);
          if (state.activeTurn?.begun === true) expect(isBusySessionStatus(state.status)).toBe(true);
        }
      }),
      { numRuns: 500 },
    );
  });
});
