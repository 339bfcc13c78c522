import { describe, expect, it } from "vitest";
import { AUTO_END_SESSIONS_KEY, AutoEndLedger } from "./auto-end-ledger.js";
import { MemoryStorage } from "./testing/fakes.js";

const entry = { sessionId: "session-aaaa", origin: "https://app.example" };

describe("AutoEndLedger", () => {
  it("hands a new worker what the previous one recorded, once", async () => {
    const storage = new MemoryStorage();
    await new AutoEndLedger(storage).record([entry]);
    const next = new AutoEndLedger(storage);
    expect(await next.takeOrphans()).toEqual([entry]);
    expect(await next.takeOrphans()).toEqual([]);
  });

  it("reads the orphans before a write queued after it", async () => {
    const storage = new MemoryStorage();
    storage.values.set(AUTO_END_SESSIONS_KEY, [entry]);
    const ledger = new AutoEndLedger(storage);
    const orphans = ledger.takeOrphans();
    const write = ledger.record([]);
    expect(await orphans).toEqual([entry]);
    await write;
    expect(storage.values.get(AUTO_END_SESSIONS_KEY)).toEqual([]);
  });

  it("ignores invalid stored entries and only logs storage failures", async () => {
    const storage = new MemoryStorage();
    storage.values.set(AUTO_END_SESSIONS_KEY, [{ sessionId: "../../etc", origin: "https://app.example" }]);
    const warnings: string[] = [];
    const ledger = new AutoEndLedger(storage, { warn: (code) => warnings.push(code) });
    expect(await ledger.takeOrphans()).toEqual([]);
    storage.failWrites = true;
    await expect(ledger.record([entry])).resolves.toBeUndefined();
    expect(warnings).toEqual(["STORAGE_ERROR"]);
  });
});
