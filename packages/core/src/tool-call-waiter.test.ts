import { describe, expect, it } from "vitest";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { ToolCallWaiter } from "./tool-call-waiter.js";

/** The code a synchronous step threw, or "accepted". */
function codeOf(step: () => unknown): string {
  try {
    step();
  } catch (error) {
    return (error as PedelecError).code;
  }
  return "accepted";
}

function call(toolRequestId: string, timeoutMs = 5_000) {
  return { turnId: "t1", toolRequestId, toolName: "add_todo", args: { title: "milk" }, timeoutMs };
}

describe("ToolCallWaiter", () => {
  it("settles with the page's answer, once; a second answer is refused as not pending", async () => {
    const waiter = new ToolCallWaiter();
    const settled = waiter.wait(call("r1"), new AbortController().signal);
    expect(waiter.pending()).toEqual([call("r1")]);
    waiter.answer("r1", { ok: true, result: { done: true } });
    expect(codeOf(() => waiter.answer("r1", { ok: true, result: 2 }))).toBe("TOOL_CALL_NOT_PENDING");
    await expect(settled).resolves.toEqual({ outcome: "answered", result: { ok: true, result: { done: true } } });
    expect(waiter.size).toBe(0);
    expect(waiter.pending()).toEqual([]);
  });

  it("times out with TOOL_TIMEOUT and refuses a late answer and a late claim with TOOL_TIMEOUT", async () => {
    const waiter = new ToolCallWaiter();
    const settlement = await waiter.wait(call("r2", 20), new AbortController().signal);
    expect(settlement.outcome).toBe("timed-out");
    expect(settlement.outcome !== "answered" && settlement.error.code).toBe("TOOL_TIMEOUT");
    expect(codeOf(() => waiter.answer("r2", { ok: true, result: null }))).toBe("TOOL_TIMEOUT");
    expect(codeOf(() => waiter.claim("r2", "tab-a"))).toBe("TOOL_TIMEOUT");
  });

  it("refuses an unknown call as not pending", () => {
    const waiter = new ToolCallWaiter();
    expect(codeOf(() => waiter.claim("nope", "tab-a"))).toBe("TOOL_CALL_NOT_PENDING");
    expect(codeOf(() => waiter.answer("nope", { ok: true, result: 1 }))).toBe("TOOL_CALL_NOT_PENDING");
  });

  it("ends with the abort reason when the turn stops", async () => {
    const waiter = new ToolCallWaiter();
    const controller = new AbortController();
    const settled = waiter.wait(call("r3"), controller.signal);
    controller.abort(new PedelecError("SESSION_ENDED", "ended"));
    const settlement = await settled;
    expect(settlement.outcome).toBe("cancelled");
    expect(settlement.outcome !== "answered" && settlement.error.code).toBe("SESSION_ENDED");
  });

  it("calls a call whose CLI went away abandoned", async () => {
    const waiter = new ToolCallWaiter();
    const controller = new AbortController();
    const settled = waiter.wait(call("r4"), controller.signal);
    controller.abort(new PedelecError("IPC_UNAVAILABLE", "gone"));
    expect((await settled).outcome).toBe("abandoned");
  });

  it("gives a call to the first claimant only, and takes only that claimant's answer", async () => {
    const waiter = new ToolCallWaiter();
    const settled = waiter.wait(call("r5"), new AbortController().signal);
    expect(waiter.claim("r5", "tab-a")).toBe(true);
    expect(waiter.claim("r5", "tab-a")).toBe(true);
    expect(waiter.claim("r5", "tab-b")).toBe(false);
    expect(codeOf(() => waiter.answer("r5", { ok: true, result: "from b" }, "tab-b"))).toBe("TOOL_CALL_CLAIMED");
    expect(codeOf(() => waiter.answer("r5", { ok: true, result: "unnamed" }))).toBe("TOOL_CALL_CLAIMED");
    waiter.answer("r5", { ok: true, result: "from a" }, "tab-a");
    await expect(settled).resolves.toEqual({ outcome: "answered", result: { ok: true, result: "from a" } });
  });

  it("hands a released claim to the next claimant and reports which calls were released", async () => {
    const waiter = new ToolCallWaiter();
    const first = waiter.wait(call("r6"), new AbortController().signal);
    void waiter.wait(call("r7"), new AbortController().signal);
    waiter.claim("r6", "tab-a");
    waiter.claim("r7", "tab-b");
    expect(waiter.release((claimant) => claimant === "tab-a")).toEqual([call("r6")]);
    expect(waiter.release((claimant) => claimant === "tab-a")).toEqual([]);
    expect(waiter.claim("r6", "tab-c")).toBe(true);
    waiter.answer("r6", { ok: true, result: 6 }, "tab-c");
    await expect(first).resolves.toMatchObject({ outcome: "answered" });
  });
});
