import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { SessionEvent } from "./session-events.js";
import { sessionMachineState, stepSession } from "./session-machine.js";
import {
  isSessionStatusTransition,
  sessionMirrorState,
  stepSessionMirror,
  type SessionMirrorInput,
  type SessionMirrorState,
} from "./session-mirror.js";
import { liveStartStatus, machineInputs, toolCallIds } from "./testing/session-machine-inputs.js";

/**
 * Every input of the machine but `core-lost`, which by design sends no event (the runtime vanished), so no page could
 * mirror it, and `event-published`, which moves no status.
 */
const mirroredInputs = machineInputs(["core-lost", "event-published"]);

/** Feeds `inputs` to the mirror, failing on an irregular step, and returns the final state. */
function mirror(inputs: readonly SessionMirrorInput[], state: SessionMirrorState = sessionMirrorState({ status: "idle" })) {
  for (const input of inputs) {
    const step = stepSessionMirror(state, input);
    if (step.irregular !== undefined) throw new Error(`irregular ${step.irregular.from} → ${step.irregular.to}`);
    state = step.state;
  }
  return state;
}

const received = (event: SessionEvent, replayed = false): SessionMirrorInput => ({ type: "event-received", event, replayed });

describe("the session mirror", () => {
  it("follows a turn: the turn under way, its status, then idle", () => {
    const running = mirror([
      received({ type: "turn-started", turnId: "t1", turnKind: "user" }),
      received({ type: "status-changed", status: "running", turnId: "t1" }),
    ]);
    expect(running).toEqual({ status: "running", activeTurn: { turnId: "t1", turnKind: "user" }, ended: false });
    const idle = mirror(
      [received({ type: "status-changed", status: "idle", turnId: "t1" }), received({ type: "turn-completed", turnId: "t1", turnKind: "user" })],
      running,
    );
    expect(idle).toEqual({ status: "idle", activeTurn: null, ended: false });
  });

  it("takes a status change the table lacks from Core anyway, and says so", () => {
    const step = stepSessionMirror(sessionMirrorState({ status: "idle" }), received({ type: "status-changed", status: "waiting_tool_result" }));
    expect(step.state.status).toBe("waiting_tool_result");
    expect(step.irregular).toEqual({ from: "idle", to: "waiting_tool_result" });
    expect(isSessionStatusTransition("idle", "waiting_tool_result")).toBe(false);
    expect(isSessionStatusTransition("idle", "running")).toBe(true);
    expect(isSessionStatusTransition("running", "running")).toBe(false);
  });

  it("leaves replayed events to the answer, which holds where they lead", () => {
    const state = sessionMirrorState({ status: "idle" });
    const replayed = mirror(
      [received({ type: "status-changed", status: "running" }, true), received({ type: "session-ended", reason: "requested" }, true)],
      state,
    );
    expect(replayed).toBe(state);
    const attached = mirror([{ type: "info-received", status: "running", activeTurn: { turnId: "t2", turnKind: "prepare" } }], state);
    expect(attached).toEqual({ status: "running", activeTurn: { turnId: "t2", turnKind: "prepare" }, ended: false });
  });

  it("shows error after a lost link while busy or during the page's own turn, and keeps ended final", () => {
    expect(mirror([{ type: "link-lost", ownTurnUnderWay: false }], sessionMirrorState({ status: "waiting_tool_result" })).status).toBe("error");
    expect(mirror([{ type: "link-lost", ownTurnUnderWay: true }]).status).toBe("error");
    expect(mirror([{ type: "link-lost", ownTurnUnderWay: false }]).status).toBe("idle");
    const ended = mirror([{ type: "session-left" }]);
    expect(ended).toEqual({ status: "ended", activeTurn: null, ended: true });
    expect(mirror([received({ type: "status-changed", status: "running" }), { type: "link-lost", ownTurnUnderWay: true }], ended)).toBe(ended);
    expect(sessionMirrorState({ status: "ended" }).ended).toBe(true);
  });
});

describe("the session mirror, on the events of the real machine", () => {
  it("shows the machine's status, turn under way and end after every step, and finds every change in the table", () => {
    fc.assert(
      fc.property(liveStartStatus, fc.array(mirroredInputs, { maxLength: 60 }), fc.nat({ max: 60 }), (status, makers, attachAt) => {
        let machine = sessionMachineState({ sessionId: "s1", status });
        let page = sessionMirrorState({ status });
        // A second page attaches part way through: it gets the answer, then the replay of what came before it.
        let late: SessionMirrorState | undefined;
        const replay: SessionEvent[] = [];
        const { made, next } = toolCallIds();
        makers.forEach((make, index) => {
          const step = stepSession(machine, make(made, next));
          machine = step.state;
          for (const { event } of step.events) {
            const mirrored = stepSessionMirror(page, received(event));
            expect(mirrored.irregular).toBeUndefined();
            page = mirrored.state;
            if (late === undefined) replay.push(event);
            else late = stepSessionMirror(late, received(event)).state;
          }
          if (index === attachAt) {
            const turn = machine.activeTurn?.begun === true ? { turnId: machine.activeTurn.turnId, turnKind: machine.activeTurn.turnKind } : null;
            late = sessionMirrorState({ status: machine.status, activeTurn: turn });
            for (const event of replay) late = stepSessionMirror(late, received(event, true)).state;
          }
          const begun = machine.activeTurn?.begun === true ? machine.activeTurn.turnId : undefined;
          expect(page.status).toBe(machine.status);
          expect(page.activeTurn?.turnId).toBe(begun);
          expect(page.ended).toBe(machine.status === "ended");
          if (late !== undefined) expect(late).toEqual(page);
        });
      }),
      { numRuns: 500 },
    );
  });
});
