import { describe, expect, it } from "vitest";
import { MemoryStorage } from "./testing/fakes.js";
import { WORKSPACE_CONSENTS_KEY, WorkspaceConsentStore } from "./workspace-consent-store.js";

const APP = "https://app.example";
const OTHER = "http://localhost:3000";

describe("WorkspaceConsentStore", () => {
  it("stores folders per origin under workspaceConsents, without duplicates", async () => {
    const storage = new MemoryStorage();
    const store = new WorkspaceConsentStore(storage);
    await store.allow(APP, "/home/me/a");
    await store.allow(APP, "/home/me/a");
    await store.allow(APP, "/home/me/b");
    await store.allow(OTHER, "/home/me/a");
    expect(storage.values.get(WORKSPACE_CONSENTS_KEY)).toEqual({ [APP]: ["/home/me/a", "/home/me/b"], [OTHER]: ["/home/me/a"] });
    expect(await store.isAllowed(APP, "/home/me/b")).toBe(true);
    expect(await store.isAllowed(OTHER, "/home/me/b")).toBe(false);
    expect(await store.isAllowed(APP, "/home/me/a/inner")).toBe(false);
    expect(await store.isAllowed("https://unknown.example", "/home/me/a")).toBe(false);
  });

  it("revokes one folder, and every folder of an origin; overlapping writes do not undo each other", async () => {
    const storage = new MemoryStorage();
    const store = new WorkspaceConsentStore(storage);
    await Promise.all([store.allow(APP, "/a"), store.allow(APP, "/b"), store.allow(OTHER, "/c"), store.revoke(APP, "/a")]);
    expect(await store.list()).toEqual({ [APP]: ["/b"], [OTHER]: ["/c"] });
    await store.revoke(APP, "/b");
    expect(await store.list()).toEqual({ [OTHER]: ["/c"] });
    await store.allow(APP, "/d");
    await store.revokeOrigin(APP);
    expect(await store.list()).toEqual({ [OTHER]: ["/c"] });
    await store.revoke("https://unknown.example", "/c");
    expect(await store.list()).toEqual({ [OTHER]: ["/c"] });
  });

  it("does not take inherited object keys for origins", async () => {
    const store = new WorkspaceConsentStore(new MemoryStorage());
    expect(await store.isAllowed("constructor", "/a")).toBe(false);
    expect(await store.isAllowed("__proto__", "/a")).toBe(false);
  });

  it("reads a corrupt stored value as no consent, and reports storage failures as STORAGE_ERROR", async () => {
    const storage = new MemoryStorage();
    storage.values.set(WORKSPACE_CONSENTS_KEY, { [APP]: "/home/me/a" });
    const store = new WorkspaceConsentStore(storage);
    expect(await store.isAllowed(APP, "/home/me/a")).toBe(false);
    storage.failWrites = true;
    await expect(store.allow(APP, "/a")).rejects.toMatchObject({ code: "STORAGE_ERROR" });
    storage.failWrites = false;
    storage.failReads = true;
    await expect(store.list()).rejects.toMatchObject({ code: "STORAGE_ERROR" });
  });
});
