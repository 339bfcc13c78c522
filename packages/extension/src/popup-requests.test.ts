import { describe, expect, it } from "vitest";
import { ApprovalBroker } from "./approval-broker.js";
import { ApprovalStore } from "./approval-store.js";
import { SingleApprovalWindow } from "./approval-window.js";
import { popupResponseSchema } from "./internal-messages.js";
import { createPopupRequestHandler } from "./popup-requests.js";
import { FakeWindows, MemoryStorage } from "./testing/fakes.js";
import { WorkspaceConsentStore } from "./workspace-consent-store.js";

function setup() {
  const storage = new MemoryStorage();
  const approvedOrigins = new ApprovalStore(storage);
  const consents = new WorkspaceConsentStore(storage);
  let ids = 0;
  const approvals = new ApprovalBroker({
    store: approvedOrigins,
    consents,
    window: new SingleApprovalWindow(new FakeWindows(), "chrome-extension://pedelec/popup.html"),
    createId: () => `approval-${++ids}`,
    now: () => new Date("2025-01-01T10:00:00.000Z"),
  });
  let changes = 0;
  const handle = createPopupRequestHandler({ approvals, approvedOrigins, consents, onChange: () => void (changes += 1) });
  return { storage, approvedOrigins, consents, approvals, handle, changes: () => changes };
}

describe("popup request handler", () => {
  it("lists pending questions, approved origins, their folders and refused origins", async () => {
    const { handle, approvals, approvedOrigins, consents } = setup();
    await approvedOrigins.approve("https://old.example");
    await consents.allow("https://old.example", "/home/me/project");
    void approvals.waitForApproval("https://new.example").catch(() => undefined);
    void approvals.waitForWorkspaceConsent("https://old.example", "/srv/site").catch(() => undefined);
    await approvals.decide("https://bad.example", "reject");
    const response = await handle({ type: "list-approvals" });
    expect(popupResponseSchema.parse(response)).toEqual({
      ok: true,
      snapshot: {
        pending: [
          { kind: "origin", approvalId: "approval-1", origin: "https://new.example", requestedAt: "2025-01-01T10:00:00.000Z" },
          { kind: "workspace", approvalId: "approval-2", origin: "https://old.example", path: "/srv/site", requestedAt: "2025-01-01T10:00:00.000Z" },
        ],
        approved: ["https://old.example"],
        folders: { "https://old.example": ["/home/me/project"] },
        refused: [{ origin: "https://bad.example", until: "2025-01-01T10:01:00.000Z" }],
      },
    });
  });

  it("approves a pending origin and answers with the new snapshot", async () => {
    const { handle, approvals, changes } = setup();
    const waiting = approvals.waitForApproval("https://new.example");
    const response = await handle({ type: "decide-approval", origin: "https://new.example", decision: "approve" });
    await expect(waiting).resolves.toBeUndefined();
    expect(response).toEqual({ ok: true, snapshot: { pending: [], approved: ["https://new.example"], folders: {}, refused: [] } });
    expect(changes()).toBe(1);
  });

  it("rejects a pending origin", async () => {
    const { handle, approvals } = setup();
    const waiting = approvals.waitForApproval("https://new.example");
    await handle({ type: "decide-approval", origin: "https://new.example", decision: "reject" });
    await expect(waiting).rejects.toMatchObject({ code: "APPROVAL_REJECTED" });
  });

  it("allows and denies a folder", async () => {
    const { handle, approvals, consents } = setup();
    const allowed = approvals.waitForWorkspaceConsent("https://app.example", "/home/me/a");
    const denied = approvals.waitForWorkspaceConsent("https://other.example", "/home/me/b");
    await handle({ type: "decide-workspace", origin: "https://app.example", path: "/home/me/a", decision: "allow" });
    await handle({ type: "decide-workspace", origin: "https://other.example", path: "/home/me/b", decision: "deny" });
    await expect(allowed).resolves.toBeUndefined();
    await expect(denied).rejects.toMatchObject({ code: "WORKSPACE_PATH_INVALID" });
    expect(await consents.list()).toEqual({ "https://app.example": ["/home/me/a"] });
  });

  it("refuses to allow a folder in any spelling but the normalized one", async () => {
    const { handle, consents } = setup();
    for (const path of ["/home/me/a/", "/home/me/../me/a", "relative", "/etc"]) {
      const response = await handle({ type: "decide-workspace", origin: "https://app.example", path, decision: "allow" });
      expect(response).toMatchObject({ ok: false });
    }
    expect(await consents.list()).toEqual({});
  });

  it("revokes a folder, and revoking an origin drops its folders too", async () => {
    const { handle, approvedOrigins, consents } = setup();
    await approvedOrigins.approve("https://old.example");
    await consents.allow("https://old.example", "/a");
    await consents.allow("https://old.example", "/b");
    await consents.allow("https://kept.example", "/c");
    const afterFolder = await handle({ type: "revoke-folder", origin: "https://old.example", path: "/a" });
    expect(afterFolder).toMatchObject({ ok: true, snapshot: { folders: { "https://old.example": ["/b"], "https://kept.example": ["/c"] } } });
    const afterOrigin = await handle({ type: "revoke-origin", origin: "https://old.example" });
    expect(afterOrigin).toMatchObject({ ok: true, snapshot: { approved: [], folders: { "https://kept.example": ["/c"] } } });
  });

  it("answers invalid messages and origins with an error instead of throwing", async () => {
    const { handle } = setup();
    expect(await handle({ type: "approve-everything" })).toMatchObject({ ok: false, error: { code: "INVALID_INPUT" } });
    expect(await handle(null)).toMatchObject({ ok: false, error: { code: "INVALID_INPUT" } });
    expect(await handle({ type: "revoke-folder", origin: "https://app.example" })).toMatchObject({ ok: false, error: { code: "INVALID_INPUT" } });
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
