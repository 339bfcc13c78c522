import { describe, expect, it } from "vitest";
import { APPROVAL_TIMES_KEY, APPROVED_ORIGINS_KEY, ApprovalStore } from "./approval-store.js";
import { MemoryStorage } from "./testing/fakes.js";

describe("ApprovalStore", () => {
  it("persists approvals under approvedOrigins as an array, without duplicates", async () => {
    const storage = new MemoryStorage();
    const store = new ApprovalStore(storage);
    await store.approve("https://a.example");
    await store.approve("https://a.example");
    await store.approve("http://localhost:3000");
    expect(storage.values.get(APPROVED_ORIGINS_KEY)).toEqual(["https://a.example", "http://localhost:3000"]);
    expect(await store.isApproved("https://a.example")).toBe(true);
    expect(await store.isApproved("https://b.example")).toBe(false);
  });

  it("revokes, and overlapping writes do not undo each other", async () => {
    const storage = new MemoryStorage();
    const store = new ApprovalStore(storage);
    await Promise.all([store.approve("https://a.example"), store.approve("https://b.example"), store.revoke("https://a.example")]);
    expect(await store.list()).toEqual(["https://b.example"]);
  });

  it("reads a corrupt stored value as nothing approved", async () => {
    const storage = new MemoryStorage();
    storage.values.set(APPROVED_ORIGINS_KEY, "https://a.example");
    expect(await new ApprovalStore(storage).list()).toEqual([]);
  });

  it("reports storage failures as STORAGE_ERROR, and recovers for later writes", async () => {
    const storage = new MemoryStorage();
    const store = new ApprovalStore(storage);
    storage.failWrites = true;
    await expect(store.approve("https://a.example")).rejects.toMatchObject({ code: "STORAGE_ERROR" });
    storage.failWrites = false;
    await store.approve("https://b.example");
    expect(await store.list()).toEqual(["https://b.example"]);
    storage.failReads = true;
    await expect(store.isApproved("https://b.example")).rejects.toMatchObject({ code: "STORAGE_ERROR" });
  });

  it("records when each origin was approved, keeps it on re-approval, and drops it on revocation", async () => {
    const storage = new MemoryStorage();
    let clock = 1000;
    const store = new ApprovalStore(storage, { now: () => clock });
    await store.approve("https://a.example");
    clock = 2000;
    await store.approve("https://a.example");
    await store.approve("https://b.example");
    expect(storage.values.get(APPROVAL_TIMES_KEY)).toEqual({ "https://a.example": 1000, "https://b.example": 2000 });
    expect(await store.approvedAt("https://a.example")).toBe(1000);
    expect(await store.approvedAt("https://unknown.example")).toBeUndefined();
    await store.revoke("https://a.example");
    expect(storage.values.get(APPROVAL_TIMES_KEY)).toEqual({ "https://b.example": 2000 });
    expect(await store.approvedAt("https://a.example")).toBeUndefined();
    clock = 3000;
    await store.approve("https://a.example");
    expect(await store.approvedAt("https://a.example")).toBe(3000);
  });

  it("gives an origin approved before times were kept the time it is first needed, and keeps that time", async () => {
    const storage = new MemoryStorage();
    storage.values.set(APPROVED_ORIGINS_KEY, ["https://old.example"]);
    let clock = 5000;
    const store = new ApprovalStore(storage, { now: () => clock });
    const [first, second] = await Promise.all([store.approvedAt("https://old.example"), store.approvedAt("https://old.example")]);
    expect(first).toBe(5000);
    expect(second).toBe(5000);
    clock = 9000;
    expect(await store.approvedAt("https://old.example")).toBe(5000);
    expect(storage.values.get(APPROVAL_TIMES_KEY)).toEqual({ "https://old.example": 5000 });
  });

  it("replaces a time left behind for an origin that is no longer approved", async () => {
    const storage = new MemoryStorage();
    storage.values.set(APPROVAL_TIMES_KEY, { "https://a.example": 10 });
    const store = new ApprovalStore(storage, { now: () => 7000 });
    expect(await store.approvedAt("https://a.example")).toBeUndefined();
    await store.approve("https://a.example");
    expect(await store.approvedAt("https://a.example")).toBe(7000);
  });

  it("reports a failure to store the approval time as STORAGE_ERROR", async () => {
    const storage = new MemoryStorage();
    storage.values.set(APPROVED_ORIGINS_KEY, ["https://old.example"]);
    const store = new ApprovalStore(storage, { now: () => 1 });
    storage.failWrites = true;
    await expect(store.approvedAt("https://old.example")).rejects.toMatchObject({ code: "STORAGE_ERROR" });
  });
});
