import { describe, expect, it } from "vitest";
import { INSTANCE_ID_KEY, InstanceIdStore } from "./instance-id.js";
import { MemoryStorage } from "./testing/fakes.js";

describe("InstanceIdStore", () => {
  it("creates a random base64url id on first need and keeps it", async () => {
    const storage = new MemoryStorage();
    const store = new InstanceIdStore(storage);
    expect(storage.values.has(INSTANCE_ID_KEY)).toBe(false);
    const [first, second] = await Promise.all([store.get(), store.get()]);
    expect(first).toMatch(/^[A-Za-z0-9_-]{22,43}$/);
    expect(second).toBe(first);
    expect(storage.values.get(INSTANCE_ID_KEY)).toBe(first);
    // Another worker (a restart) reads the same id; another install makes its own.
    expect(await new InstanceIdStore(storage).get()).toBe(first);
    expect(await new InstanceIdStore(new MemoryStorage()).get()).not.toBe(first);
  });

  it("replaces a stored value that is not a valid id", async () => {
    const storage = new MemoryStorage();
    storage.values.set(INSTANCE_ID_KEY, "short");
    const id = await new InstanceIdStore(storage).get();
    expect(id).toMatch(/^[A-Za-z0-9_-]{22,43}$/);
  });

  it("reports storage failures as STORAGE_ERROR", async () => {
    const storage = new MemoryStorage();
    storage.failWrites = true;
    await expect(new InstanceIdStore(storage).get()).rejects.toMatchObject({ code: "STORAGE_ERROR" });
    storage.failWrites = false;
    storage.failReads = true;
    await expect(new InstanceIdStore(storage).get()).rejects.toMatchObject({ code: "STORAGE_ERROR" });
  });
});
