import { describe, expect, it } from "vitest";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { ToolCallWaiter } from "./tool-call-waiter.js";

describe("ToolCallWaiter", () => {
  it("settles with the page's answer, once", async () => {
    const waiter = new ToolCallWaiter();
    const settled = waiter.wait("r1", "t1", 5_000, new AbortController().signal);
    expect(waiter.answer("r1", { ok: true, result: { done: true } })).toBe(true);
    expect(waiter.answer("r1", { ok: true, result: 2 })).toBe(false);
    await expect(settled).resolves.toEqual({ outcome: "answered", result: { ok: true, result: { done: true } } });
    expect(waiter.size).toBe(0);
  });

  it("times out with TOOL_TIMEOUT and refuses a late answer", async () => {
    const waiter = new ToolCallWaiter();
    const settlement = await waiter.wait("r2", "t1", 20, new AbortController().signal);
    expect(settlement.outcome).toBe("timed-out");
    expect(settlement.outcome !== "answered" && settlement.error.code).toBe("TOOL_TIMEOUT");
    expect(waiter.answer("r2", { ok: true, result: null })).toBe(false);
  });

  it("ends with the abort reason when the turn stops", async () => {
    const waiter = new ToolCallWaiter();
    const controller = new AbortController();
    const settled = waiter.wait("r3", "t1", 5_000, controller.signal);
    controller.abort(new PedelecError("SESSION_ENDED", "ended"));
    const settlement = await settled;
    expect(settlement.outcome).toBe("cancelled");
    expect(settlement.outcome !== "answered" && settlement.error.code).toBe("SESSION_ENDED");
  });

  it("calls a call whose CLI went away abandoned", async () => {
    const waiter = new ToolCallWaiter();
    const controller = new AbortController();
    const settled = waiter.wait("r4", "t1", 5_000, controller.signal);
    controller.abort(new PedelecError("IPC_UNAVAILABLE", "gone"));
    expect((await settled).outcome).toBe("abandoned");
  });
});
