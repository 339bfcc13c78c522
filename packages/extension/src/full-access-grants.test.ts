import { describe, expect, it } from "vitest";
import { APPROVED_ORIGINS_KEY, ApprovalStore } from "./approval-store.js";
import { FULL_ACCESS_GRANTS_KEY, FullAccessGrantStore } from "./full-access-grants.js";
import { MemoryStorage } from "./testing/fakes.js";

const APP = "https://app.example";

function setup() {
  const storage = new MemoryStorage();
  let clock = 1000;
  const approvedOrigins = new ApprovalStore(storage, { now: () => clock });
  const grants = new FullAccessGrantStore(storage, approvedOrigins, { now: () => clock });
  return {
    storage,
    approvedOrigins,
    grants,
    setClock: (value: number) => {
      clock = value;
    },
  };
}

describe("FullAccessGrantStore", () => {
  it("grants only an approved origin (CREATE_SESSION_NOT_APPROVED otherwise)", async () => {
    const { grants, approvedOrigins, storage } = setup();
    await expect(grants.grant(APP)).rejects.toMatchObject({ code: "CREATE_SESSION_NOT_APPROVED" });
    expect(storage.values.get(FULL_ACCESS_GRANTS_KEY)).toBeUndefined();
    await approvedOrigins.approve(APP);
    const grant = await grants.grant(APP);
    expect(grant).toEqual({ grantId: expect.stringMatching(/^[A-Za-z0-9_-]{22,64}$/), grantedAt: 1000 });
    expect(storage.values.get(FULL_ACCESS_GRANTS_KEY)).toEqual({ [APP]: grant });
    expect(await grants.grantFor(APP)).toEqual(grant);
  });

  it("keeps an existing grant when granted again, and makes a new one after a revocation", async () => {
    const { grants, approvedOrigins, setClock } = setup();
    await approvedOrigins.approve(APP);
    const first = await grants.grant(APP);
    setClock(2000);
    expect(await grants.grant(APP)).toEqual(first);
    expect(await grants.revoke(APP)).toBe(true);
    expect(await grants.revoke(APP)).toBe(false);
    expect(await grants.grantFor(APP)).toBeUndefined();
    const second = await grants.grant(APP);
    expect(second.grantId).not.toBe(first.grantId);
    expect(second.grantedAt).toBe(2000);
  });

  it("does not trust a grant whose origin is no longer approved", async () => {
    const { grants, approvedOrigins, storage } = setup();
    await approvedOrigins.approve(APP);
    await grants.grant(APP);
    storage.values.set(APPROVED_ORIGINS_KEY, []);
    expect(await grants.grantFor(APP)).toBeUndefined();
  });

  it("reads a corrupt stored value as no grants, and takes no inherited keys for origins", async () => {
    const { grants, approvedOrigins, storage } = setup();
    await approvedOrigins.approve(APP);
    storage.values.set(FULL_ACCESS_GRANTS_KEY, { [APP]: { grantId: "x", grantedAt: 1 } });
    expect(await grants.list()).toEqual({});
    expect(await grants.grantFor("constructor")).toBeUndefined();
  });

  it("reports storage failures as STORAGE_ERROR", async () => {
    const { grants, approvedOrigins, storage } = setup();
    await approvedOrigins.approve(APP);
    storage.failWrites = true;
    await expect(grants.grant(APP)).rejects.toMatchObject({ code: "STORAGE_ERROR" });
    storage.failWrites = false;
    storage.failReads = true;
    await expect(grants.grantFor(APP)).rejects.toMatchObject({ code: "STORAGE_ERROR" });
  });

  it("gives an origin approved before approval times were kept its time no later than the grant", async () => {
    const { grants, approvedOrigins, storage, setClock } = setup();
    storage.values.set(APPROVED_ORIGINS_KEY, [APP]);
    setClock(4000);
    const grant = await grants.grant(APP);
    setClock(9000);
    expect(await approvedOrigins.approvedAt(APP)).toBe(4000);
    expect(grant.grantedAt).toBe(4000);
  });
});
