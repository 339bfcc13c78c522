import { describe, expect, it } from "vitest";
import { ApprovalBroker } from "./approval-broker.js";
import { ApprovalStore } from "./approval-store.js";
import { popupResponseSchema } from "./internal-messages.js";
import { createPopupRequestHandler } from "./popup-requests.js";
import { MemoryStorage } from "./testing/fakes.js";

function setup() {
  const storage = new MemoryStorage();
  const approvedOrigins = new ApprovalStore(storage);
  const approvals = new ApprovalBroker({ store: approvedOrigins, openPopup: async () => undefined, createId: () => "approval-1" });
  let changes = 0;
  const handle = createPopupRequestHandler({ approvals, approvedOrigins, onChange: () => void (changes += 1) });
  return { storage, approvedOrigins, approvals, handle, changes: () => changes };
}

describe("popup request handler", () => {
  it("lists pending and approved origins", async () => {
    const { handle, approvals, approvedOrigins } = setup();
    await approvedOrigins.approve("https://old.example");
    void approvals.waitForApproval("https://new.example").catch(() => undefined);
    const response = await handle({ type: "list-approvals" });
    expect(popupResponseSchema.parse(response)).toMatchObject({
      ok: true,
      snapshot: { pending: [{ approvalId: "approval-1", origin: "https://new.example" }], approved: ["https://old.example"] },
    });
  });

  it("approves a pending origin and answers with the new snapshot", async () => {
    const { handle, approvals, changes } = setup();
    const waiting = approvals.waitForApproval("https://new.example");
    const response = await handle({ type: "decide-approval", origin: "https://new.example", decision: "approve" });
    await expect(waiting).resolves.toBeUndefined();
    expect(response).toEqual({ ok: true, snapshot: { pending: [], approved: ["https://new.example"] } });
    expect(changes()).toBe(1);
  });

  it("rejects a pending origin", async () => {
    const { handle, approvals } = setup();
    const waiting = approvals.waitForApproval("https://new.example");
    await handle({ type: "decide-approval", origin: "https://new.example", decision: "reject" });
    await expect(waiting).rejects.toMatchObject({ code: "APPROVAL_REJECTED" });
  });

  it("revokes an approved origin", async () => {
    const { handle, approvedOrigins } = setup();
    await approvedOrigins.approve("https://old.example");
    const response = await handle({ type: "revoke-origin", origin: "https://old.example" });
    expect(response).toEqual({ ok: true, snapshot: { pending: [], approved: [] } });
  });

  it("answers invalid messages and origins with an error instead of throwing", async () => {
    const { handle } = setup();
    expect(await handle({ type: "approve-everything" })).toMatchObject({ ok: false, error: { code: "INVALID_INPUT" } });
    expect(await handle(null)).toMatchObject({ ok: false, error: { code: "INVALID_INPUT" } });
    expect(await handle({ type: "decide-approval", origin: "http://evil.example", decision: "approve" })).toMatchObject({
      ok: false,
      error: { code: "INVALID_ORIGIN" },
    });
  });

  it("reports a failed write as STORAGE_ERROR", async () => {
    const { handle, storage } = setup();
    storage.failWrites = true;
    expect(await handle({ type: "decide-approval", origin: "https://new.example", decision: "approve" })).toMatchObject({
      ok: false,
      error: { code: "STORAGE_ERROR" },
    });
  });
});
