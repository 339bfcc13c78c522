import { describe, expect, it, vi } from "vitest";
import { ApprovalBroker } from "./approval-broker.js";
import { ApprovalStore } from "./approval-store.js";
import { SingleApprovalWindow } from "./approval-window.js";
import { FULL_ACCESS_GRANTS_KEY, FullAccessGrantStore } from "./full-access-grants.js";
import { FullAccessRevocations } from "./full-access-revocations.js";
import { desktopLinkResponseSchema, popupResponseSchema } from "./internal-messages.js";
import { NativeLink } from "./native-link.js";
import { createPopupRequestHandler } from "./popup-requests.js";
import { PENDING_REVOCATIONS_KEY, RevocationStore } from "./revocation-store.js";
import { FakeNativeHost, FakeWindows, MemoryStorage } from "./testing/fakes.js";
import { WorkspaceConsentStore } from "./workspace-consent-store.js";

const waitOptions = { timeout: 2000, interval: 2 };
/** 2025-01-01T10:00:00.000Z */
const NOW = Date.UTC(2025, 0, 1, 10);

function setup(linkCheckTimeoutMs = 2_000) {
  const storage = new MemoryStorage();
  const now = () => NOW;
  const approvedOrigins = new ApprovalStore(storage, { now });
  const consents = new WorkspaceConsentStore(storage);
  let grantIds = 0;
  const grants = new FullAccessGrantStore(storage, approvedOrigins, { now, createGrantId: () => `grant-${++grantIds}-abcdefghijklmnopqrstuv` });
  const pendingRevocations = new RevocationStore(storage);
  const host = new FakeNativeHost();
  const link = new NativeLink({ connect: host.connect, logger: { warn: () => undefined } });
  let changes = 0;
  const onChange = () => {
    changes += 1;
  };
  const revocations = new FullAccessRevocations({ link, grants, pending: pendingRevocations, now, logger: { warn: () => undefined }, onChange });
  let ids = 0;
  const approvals = new ApprovalBroker({
    store: approvedOrigins,
    consents,
    window: new SingleApprovalWindow(new FakeWindows(), "chrome-extension://pedelec/popup.html"),
    createId: () => `approval-${++ids}`,
    now: () => new Date("2025-01-01T10:00:00.000Z"),
  });
  const handle = createPopupRequestHandler({
    approvals,
    approvedOrigins,
    consents,
    grants,
    revocations,
    pendingRevocations,
    link,
    linkCheckTimeoutMs,
    onChange,
  });
  return { storage, approvedOrigins, consents, grants, approvals, host, link, handle, changes: () => changes };
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
        fullAccess: {},
        revocationsPending: {},
      },
    });
  });

  it("approves a pending origin and answers with the new snapshot", async () => {
    const { handle, approvals, changes } = setup();
    const waiting = approvals.waitForApproval("https://new.example");
    const response = await handle({ type: "decide-approval", origin: "https://new.example", decision: "approve" });
    await expect(waiting).resolves.toBeUndefined();
    expect(response).toEqual({
      ok: true,
      snapshot: { pending: [], approved: ["https://new.example"], folders: {}, refused: [], fullAccess: {}, revocationsPending: {} },
    });
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

  it("grants Full Access only to an approved origin, and lists the grant", async () => {
    const { handle, approvedOrigins, storage } = setup();
    expect(await handle({ type: "grant-full-access", origin: "https://app.example" })).toMatchObject({
      ok: false,
      error: { code: "CREATE_SESSION_NOT_APPROVED" },
    });
    expect(storage.values.get(FULL_ACCESS_GRANTS_KEY)).toBeUndefined();
    await approvedOrigins.approve("https://app.example");
    const response = await handle({ type: "grant-full-access", origin: "https://app.example" });
    expect(response).toMatchObject({ ok: true, snapshot: { fullAccess: { "https://app.example": { grantedAt: "2025-01-01T10:00:00.000Z" } } } });
    expect(storage.values.get(FULL_ACCESS_GRANTS_KEY)).toEqual({
      "https://app.example": { grantId: "grant-1-abcdefghijklmnopqrstuv", grantedAt: NOW },
    });
  });

  it("revokes Full Access: stored as pending, sent to Core at once, dropped when Core confirms", async () => {
    const { handle, approvedOrigins, host, storage, changes } = setup();
    await approvedOrigins.approve("https://app.example");
    await handle({ type: "grant-full-access", origin: "https://app.example" });
    const response = await handle({ type: "revoke-full-access", origin: "https://app.example" });
    expect(response).toMatchObject({
      ok: true,
      snapshot: { approved: ["https://app.example"], fullAccess: {}, revocationsPending: { "https://app.example": "2025-01-01T10:00:00.000Z" } },
    });
    const frame = await vi.waitFor(() => host.current.requests("revokeFullAccess")[0] ?? Promise.reject(new Error("not sent yet")), waitOptions);
    expect(frame).toMatchObject({ type: "revokeFullAccess", origin: "https://app.example", payload: { revokedAt: NOW } });
    expect(frame.fullAccessClaim).toBeUndefined();
    const changesBefore = changes();
    host.current.respond(frame, { stoppedRuns: 1, endedSessions: 0 });
    await vi.waitFor(() => expect(storage.values.get(PENDING_REVOCATIONS_KEY)).toEqual({}), waitOptions);
    expect(changes()).toBe(changesBefore + 1);
    expect(await handle({ type: "list-approvals" })).toMatchObject({ ok: true, snapshot: { revocationsPending: {} } });
  });

  it("revoking an origin's approval also revokes its Full Access and tells Core", async () => {
    const { handle, approvedOrigins, grants, host } = setup();
    await approvedOrigins.approve("https://app.example");
    await approvedOrigins.approve("https://sandboxed.example");
    await handle({ type: "grant-full-access", origin: "https://app.example" });
    const response = await handle({ type: "revoke-origin", origin: "https://app.example" });
    expect(response).toMatchObject({ ok: true, snapshot: { approved: ["https://sandboxed.example"], fullAccess: {} } });
    expect(await grants.list()).toEqual({});
    const frame = await vi.waitFor(() => host.current.requests("revokeFullAccess")[0] ?? Promise.reject(new Error("not sent yet")), waitOptions);
    expect(frame).toMatchObject({ origin: "https://app.example", payload: { revokedAt: NOW } });
    // A site that never had Full Access has nothing to tell Core.
    await handle({ type: "revoke-origin", origin: "https://sandboxed.example" });
    expect(host.current.requests("revokeFullAccess")).toHaveLength(1);
  });

  it("re-granting after a revocation makes a new grant", async () => {
    const { handle, approvedOrigins, grants } = setup();
    await approvedOrigins.approve("https://app.example");
    await handle({ type: "grant-full-access", origin: "https://app.example" });
    const first = await grants.grantFor("https://app.example");
    await handle({ type: "grant-full-access", origin: "https://app.example" });
    expect(await grants.grantFor("https://app.example")).toEqual(first);
    await handle({ type: "revoke-origin", origin: "https://app.example" });
    await approvedOrigins.approve("https://app.example");
    expect(await handle({ type: "list-approvals" })).toMatchObject({ snapshot: { fullAccess: {} } });
    await handle({ type: "grant-full-access", origin: "https://app.example" });
    const second = await grants.grantFor("https://app.example");
    expect(second?.grantId).toMatch(/^[A-Za-z0-9_-]{22,}$/);
    expect(second?.grantId).not.toBe(first?.grantId);
  });

  it("keeps the grant and reports STORAGE_ERROR when the revocation cannot be stored", async () => {
    const { handle, approvedOrigins, grants, storage, host } = setup();
    await approvedOrigins.approve("https://app.example");
    await handle({ type: "grant-full-access", origin: "https://app.example" });
    storage.failWrites = true;
    expect(await handle({ type: "revoke-full-access", origin: "https://app.example" })).toMatchObject({
      ok: false,
      error: { code: "STORAGE_ERROR" },
    });
    expect(await handle({ type: "revoke-origin", origin: "https://app.example" })).toMatchObject({ ok: false, error: { code: "STORAGE_ERROR" } });
    storage.failWrites = false;
    // Nothing half-done: still approved, still granted, and nothing was sent.
    expect(await approvedOrigins.isApproved("https://app.example")).toBe(true);
    expect(await grants.grantFor("https://app.example")).toBeDefined();
    expect(host.channels).toHaveLength(0);
    storage.failReads = true;
    expect(await handle({ type: "list-approvals" })).toMatchObject({ ok: false, error: { code: "STORAGE_ERROR" } });
  });

  it("refuses Full Access requests for origins Pedelec does not serve, and unknown fields", async () => {
    const { handle } = setup();
    expect(await handle({ type: "grant-full-access", origin: "http://evil.example" })).toMatchObject({
      ok: false,
      error: { code: "INVALID_ORIGIN" },
    });
    expect(await handle({ type: "grant-full-access", origin: "https://app.example", confirmed: true })).toMatchObject({
      ok: false,
      error: { code: "INVALID_INPUT" },
    });
  });
});

describe("desktop link requests", () => {
  it("answer with the link's state without opening it", async () => {
    const { handle, host } = setup();
    expect(desktopLinkResponseSchema.parse(await handle({ type: "get-desktop-link" }))).toEqual({ ok: true, link: { state: "not-connected" } });
    expect(host.channels).toHaveLength(0);
  });

  it("check opens the link and answers once the host says whether Core answers", async () => {
    const { handle, host } = setup();
    const checking = handle({ type: "check-desktop-link" });
    expect(host.channels).toHaveLength(1);
    host.current.hello("connecting");
    expect(await handle({ type: "get-desktop-link" })).toEqual({ ok: true, link: { state: "connecting", version: "0.1.0" } });
    host.current.hello("connected", true);
    expect(desktopLinkResponseSchema.parse(await checking)).toEqual({ ok: true, link: { state: "connected", version: "0.1.0" } });
  });

  it("check answers host-missing with Chrome's reason when the host cannot start", async () => {
    const { handle, host } = setup();
    const checking = handle({ type: "check-desktop-link" });
    host.current.die("Specified native messaging host not found.");
    expect(await checking).toMatchObject({
      ok: true,
      link: {
        state: "host-missing",
        error: { code: "NATIVE_HOST_UNAVAILABLE", details: { lastError: "Specified native messaging host not found." } },
      },
    });
  });

  it("check gives up waiting after its deadline and answers what it knows", async () => {
    const { handle, host } = setup(300);
    const started = Date.now();
    const answer = await handle({ type: "check-desktop-link" });
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    expect(answer).toEqual({ ok: true, link: { state: "connecting" } });
    expect(host.channels).toHaveLength(1);
  });

  it("refuses a link request with unknown fields", async () => {
    const { handle } = setup();
    expect(await handle({ type: "get-desktop-link", verbose: true })).toMatchObject({ ok: false, error: { code: "INVALID_INPUT" } });
  });
});
