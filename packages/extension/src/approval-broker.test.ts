import { describe, expect, it } from "vitest";
import { ApprovalBroker, type ApprovalBrokerOptions } from "./approval-broker.js";
import { ApprovalStore } from "./approval-store.js";
import { MemoryStorage } from "./testing/fakes.js";

const origin = "https://app.example";

function setup(options: Partial<ApprovalBrokerOptions> = {}) {
  const storage = new MemoryStorage();
  const store = new ApprovalStore(storage);
  const popups: string[] = [];
  let ids = 0;
  const broker = new ApprovalBroker({
    store,
    openPopup: async (approvalId) => void popups.push(approvalId),
    createId: () => `approval-${++ids}`,
    now: () => new Date("2025-01-01T10:00:00.000Z"),
    ...options,
  });
  return { storage, store, popups, broker };
}

describe("ApprovalBroker", () => {
  it("counts closing the approval window without an answer as a rejection", async () => {
    const dismissals: (() => void)[] = [];
    const { broker, store } = setup({ openPopup: async (_approvalId, onDismissed) => void dismissals.push(onDismissed) });
    const waiting = broker.waitForApproval(origin);
    await expect.poll(() => dismissals.length).toBe(1);
    dismissals[0]!();
    await expect(waiting).rejects.toMatchObject({ code: "APPROVAL_REJECTED", message: expect.stringContaining("closed") as string });
    expect(await store.list()).toEqual([]);
    expect(broker.list()).toEqual([]);
  });

  it("ignores the window closing after the user answered", async () => {
    const dismissals: (() => void)[] = [];
    const { broker } = setup({ openPopup: async (_approvalId, onDismissed) => void dismissals.push(onDismissed) });
    const waiting = broker.waitForApproval(origin);
    await expect.poll(() => dismissals.length).toBe(1);
    await broker.decide(origin, "approve");
    dismissals[0]!();
    await expect(waiting).resolves.toBeUndefined();
  });

  it("shares one pending approval and one popup between waiters of one origin", async () => {
    const { broker, popups, store } = setup();
    const first = broker.waitForApproval(origin);
    const second = broker.waitForApproval(origin);
    expect(broker.list()).toEqual([{ approvalId: "approval-1", origin, requestedAt: "2025-01-01T10:00:00.000Z" }]);
    await broker.decide(origin, "approve");
    await expect(Promise.all([first, second])).resolves.toEqual([undefined, undefined]);
    expect(popups).toEqual(["approval-1"]);
    expect(await store.list()).toEqual([origin]);
    expect(broker.list()).toEqual([]);
  });

  it("keeps origins apart", async () => {
    const { broker, popups } = setup();
    const app = broker.waitForApproval(origin);
    const other = broker.waitForApproval("https://other.example");
    await broker.decide("https://other.example", "reject");
    await expect(other).rejects.toMatchObject({ code: "APPROVAL_REJECTED" });
    expect(broker.list().map((pending) => pending.origin)).toEqual([origin]);
    await broker.decide(origin, "approve");
    await expect(app).resolves.toBeUndefined();
    expect(popups).toHaveLength(2);
  });

  it("rejects without storing anything", async () => {
    const { broker, storage } = setup();
    const waiting = broker.waitForApproval(origin);
    await broker.decide(origin, "reject");
    await expect(waiting).rejects.toMatchObject({ code: "APPROVAL_REJECTED" });
    expect(storage.values.size).toBe(0);
  });

  it("times out with APPROVAL_TIMEOUT", async () => {
    const { broker } = setup({ timeoutMs: 20 });
    await expect(broker.waitForApproval(origin)).rejects.toMatchObject({ code: "APPROVAL_TIMEOUT" });
    expect(broker.list()).toEqual([]);
  });

  it("fails with OPEN_POPUP_FAILED when the popup cannot open, also for a synchronous throw", async () => {
    const rejecting = setup({ openPopup: async () => Promise.reject(new Error("No current window")) });
    await expect(rejecting.broker.waitForApproval(origin)).rejects.toMatchObject({
      code: "OPEN_POPUP_FAILED",
      details: { reason: "No current window" },
    });
    const throwing = setup({
      openPopup: () => {
        throw new Error("windows API missing");
      },
    });
    await expect(throwing.broker.waitForApproval(origin)).rejects.toMatchObject({ code: "OPEN_POPUP_FAILED" });
    expect(throwing.broker.list()).toEqual([]);
  });

  it("fails waiters with STORAGE_ERROR when the approval cannot be stored", async () => {
    const { broker, storage } = setup();
    storage.failWrites = true;
    const waiting = broker.waitForApproval(origin);
    await expect(broker.decide(origin, "approve")).rejects.toMatchObject({ code: "STORAGE_ERROR" });
    await expect(waiting).rejects.toMatchObject({ code: "STORAGE_ERROR" });
  });

  it("withdraws an aborted waiter and drops the question when nobody waits", async () => {
    const { broker } = setup();
    const controller = new AbortController();
    const waiting = broker.waitForApproval(origin, controller.signal);
    const other = broker.waitForApproval(origin);
    controller.abort();
    await expect(waiting).rejects.toBeDefined();
    expect(broker.list()).toHaveLength(1);
    await broker.decide(origin, "approve");
    await expect(other).resolves.toBeUndefined();

    const lone = new AbortController();
    const alone = broker.waitForApproval("https://third.example", lone.signal);
    lone.abort();
    await expect(alone).rejects.toBeDefined();
    expect(broker.list()).toEqual([]);
  });

  it("reports changes of the pending list", async () => {
    let changes = 0;
    const { broker } = setup({ onChange: () => void (changes += 1) });
    const waiting = broker.waitForApproval(origin);
    expect(changes).toBe(1);
    await broker.decide(origin, "approve");
    await waiting;
    expect(changes).toBe(2);
  });
});
