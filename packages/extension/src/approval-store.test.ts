import { describe, expect, it } from "vitest";
import { APPROVED_ORIGINS_KEY, ApprovalStore } from "./approval-store.js";
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
});
