import { describe, expect, it } from "vitest";
import { CachedStorage, type StorageChanges } from "./cached-storage.js";
import type { KeyValueStorage } from "./key-value-storage.js";

/** A storage area like chrome.storage's: counted reads, and change events for writes from any context. */
function fakeArea() {
  const values = new Map<string, unknown>();
  const listeners: ((changes: StorageChanges) => void)[] = [];
  let reads = 0;
  let readGate: Promise<void> | undefined;
  const area: KeyValueStorage = {
    async get(key) {
      reads += 1;
      const value = structuredClone(values.get(key));
      await readGate;
      return value;
    },
    async set(key, value) {
      values.set(key, structuredClone(value));
    },
  };
  return {
    area,
    reads: () => reads,
    holdReads(until: Promise<void>) {
      readGate = until;
    },
    /** Another context (the options page, say) writes, and the area reports it. */
    writeElsewhere(key: string, value: unknown) {
      values.set(key, structuredClone(value));
      for (const listener of listeners) listener({ [key]: { newValue: structuredClone(value) } });
    },
    onChanged: (listener: (changes: StorageChanges) => void) => void listeners.push(listener),
  };
}

describe("CachedStorage", () => {
  it("reads a key from the area once, then from its copy, and follows this worker's writes", async () => {
    const fake = fakeArea();
    const storage = new CachedStorage(fake.area, fake.onChanged);
    expect(await storage.get("approvedOrigins")).toBeUndefined();
    expect(await storage.get("approvedOrigins")).toBeUndefined();
    expect(fake.reads()).toBe(1);
    await storage.set("approvedOrigins", ["https://a.example"]);
    expect(await storage.get("approvedOrigins")).toEqual(["https://a.example"]);
    expect(fake.reads()).toBe(1);
  });

  it("follows writes made elsewhere, removals included", async () => {
    const fake = fakeArea();
    const storage = new CachedStorage(fake.area, fake.onChanged);
    await storage.set("approvedOrigins", ["https://a.example"]);
    fake.writeElsewhere("approvedOrigins", ["https://a.example", "https://b.example"]);
    expect(await storage.get("approvedOrigins")).toEqual(["https://a.example", "https://b.example"]);
    fake.writeElsewhere("approvedOrigins", undefined);
    expect(await storage.get("approvedOrigins")).toBeUndefined();
    expect(fake.reads()).toBe(0);
  });

  it("prefers a change reported while its read was under way to what the read found", async () => {
    const fake = fakeArea();
    fake.writeElsewhere("grants", { old: true });
    const storage = new CachedStorage(fake.area, fake.onChanged);
    let release: () => void = () => undefined;
    fake.holdReads(new Promise<void>((resolve) => (release = resolve)));
    const reading = storage.get("grants");
    fake.writeElsewhere("grants", { new: true });
    release();
    expect(await reading).toEqual({ new: true });
    expect(await storage.get("grants")).toEqual({ new: true });
  });

  it("gives each reader a copy: changing what one read does not change what the next reads", async () => {
    const fake = fakeArea();
    const storage = new CachedStorage(fake.area, fake.onChanged);
    const written = { "https://a.example": 1 };
    await storage.set("pendingRevocations", written);
    written["https://a.example"] = 2;
    const first = (await storage.get("pendingRevocations")) as Record<string, number>;
    first["https://b.example"] = 3;
    expect(await storage.get("pendingRevocations")).toEqual({ "https://a.example": 1 });
  });
});
