import { describe, expect, it } from "vitest";
import { PENDING_REVOCATIONS_KEY, RevocationStore } from "./revocation-store.js";
import { MemoryStorage } from "./testing/fakes.js";

const APP = "https://app.example";

describe("RevocationStore", () => {
  it("keeps the latest revocation per origin until Core confirms that one", async () => {
    const storage = new MemoryStorage();
    const store = new RevocationStore(storage);
    await store.add(APP, 100);
    await store.add(APP, 50);
    await store.add("https://other.example", 70);
    expect(storage.values.get(PENDING_REVOCATIONS_KEY)).toEqual({ [APP]: 100, "https://other.example": 70 });
    await store.add(APP, 200);
    // Core confirmed the older one while the newer was being stored: the newer stays.
    await store.confirm(APP, 100);
    expect(await store.pendingFor(APP)).toBe(200);
    await store.confirm(APP, 200);
    expect(await store.list()).toEqual({ "https://other.example": 70 });
  });

  it("reports storage failures as STORAGE_ERROR", async () => {
    const storage = new MemoryStorage();
    const store = new RevocationStore(storage);
    storage.failWrites = true;
    await expect(store.add(APP, 1)).rejects.toMatchObject({ code: "STORAGE_ERROR" });
    storage.failWrites = false;
    storage.failReads = true;
    await expect(store.list()).rejects.toMatchObject({ code: "STORAGE_ERROR" });
  });
});
