import { describe, expect, it } from "vitest";
import { ApprovalBroker, type ApprovalBrokerOptions } from "./approval-broker.js";
import { ApprovalStore } from "./approval-store.js";
import { SingleApprovalWindow } from "./approval-window.js";
import { FakeWindows, MemoryStorage } from "./testing/fakes.js";
import { WORKSPACE_CONSENTS_KEY, WorkspaceConsentStore } from "./workspace-consent-store.js";

const origin = "https://app.example";
const WINDOW_URL = "chrome-extension://pedelec/popup.html?window=approval";
const waitOptions = { timeout: 2000, interval: 2 };

function setup(options: Partial<ApprovalBrokerOptions> = {}) {
  const storage = new MemoryStorage();
  const store = new ApprovalStore(storage);
  const consents = new WorkspaceConsentStore(storage);
  const windows = new FakeWindows();
  const clock = { now: new Date("2025-01-01T10:00:00.000Z") };
  let ids = 0;
  let changes = 0;
  const broker = new ApprovalBroker({
    store,
    consents,
    window: new SingleApprovalWindow(windows, WINDOW_URL),
    createId: () => `approval-${++ids}`,
    now: () => clock.now,
    withdrawGraceMs: 40,
    closeDelayMs: 5,
    onChange: () => {
      changes += 1;
    },
    ...options,
  });
  const advance = (milliseconds: number): void => {
    clock.now = new Date(clock.now.getTime() + milliseconds);
  };
  return { storage, store, consents, windows, broker, advance, changes: () => changes };
}

/** The one window the fake browser has open. */
function onlyWindow(windows: FakeWindows): number {
  const open = [...windows.open.keys()];
  expect(open).toHaveLength(1);
  return open[0]!;
}

describe("ApprovalBroker: one window", () => {
  it("asks ten origins at once in one window, and closes it once every question is answered", async () => {
    const { broker, windows } = setup();
    const origins = Array.from({ length: 10 }, (_, index) => `http://127.0.0.1:${4000 + index}`);
    const waiting = origins.map((candidate) => broker.waitForApproval(candidate));
    expect(broker.list().map((pending) => pending.origin)).toEqual(origins);
    await expect.poll(() => windows.open.size, waitOptions).toBe(1);
    for (const candidate of origins) await broker.decide(candidate, "approve");
    await expect(Promise.all(waiting)).resolves.toHaveLength(10);
    await expect.poll(() => windows.open.size, waitOptions).toBe(0);
    expect(windows.created).toBe(1);
    expect(windows.mostOpenAtOnce).toBe(1);
  });

  it("survives a connect / ask / disconnect loop with one window, closed once the page stops asking", async () => {
    const { broker, windows } = setup();
    const outcomes: Promise<unknown>[] = [];
    for (let round = 0; round < 30; round += 1) {
      const page = new AbortController();
      outcomes.push(broker.waitForApproval(origin, page.signal).catch((error: unknown) => error));
      await new Promise((resolve) => setTimeout(resolve, 1));
      page.abort();
    }
    await Promise.all(outcomes);
    // Every round rejoined the question the first one opened.
    expect(new Set(broker.list().map((pending) => pending.approvalId))).toEqual(new Set(["approval-1"]));
    await expect.poll(() => broker.list(), waitOptions).toEqual([]);
    await expect.poll(() => windows.open.size, waitOptions).toBe(0);
    expect(windows.created).toBe(1);
    expect(windows.mostOpenAtOnce).toBe(1);
  });

  it("drops a withdrawn question after the grace period and closes the window if nothing else is pending", async () => {
    const { broker, windows } = setup({ withdrawGraceMs: 20 });
    const page = new AbortController();
    const waiting = broker.waitForApproval(origin, page.signal);
    const other = broker.waitForApproval("https://other.example");
    await expect.poll(() => windows.open.size, waitOptions).toBe(1);
    page.abort();
    await expect(waiting).rejects.toMatchObject({ code: "EXTENSION_DISCONNECTED" });
    await expect.poll(() => broker.list().map((pending) => pending.origin), waitOptions).toEqual(["https://other.example"]);
    expect(windows.open.size).toBe(1);

    const last = new AbortController();
    const again = broker.waitForApproval("https://other.example", last.signal).catch(() => undefined);
    last.abort();
    await again;
    // The first waiter of "other" still waits, so its question stays.
    expect(broker.list()).toHaveLength(1);
    await broker.decide("https://other.example", "approve");
    await expect(other).resolves.toBeUndefined();
    await expect.poll(() => windows.open.size, waitOptions).toBe(0);
  });

  it("lets a page that asks again within the grace period rejoin the pending question", async () => {
    const { broker, windows } = setup({ withdrawGraceMs: 10_000 });
    const first = new AbortController();
    void broker.waitForApproval(origin, first.signal).catch(() => undefined);
    first.abort();
    const second = broker.waitForApproval(origin);
    expect(broker.list()).toMatchObject([{ approvalId: "approval-1", origin }]);
    await broker.decide(origin, "approve");
    await expect(second).resolves.toBeUndefined();
    expect(windows.created).toBe(1);
  });

  it("opens a fresh window for a question that arrives while the old one is being closed", async () => {
    const { broker, windows } = setup({ closeDelayMs: 0 });
    const first = broker.waitForApproval(origin);
    await expect.poll(() => windows.open.size, waitOptions).toBe(1);
    await broker.decide(origin, "approve");
    await first;
    await new Promise((resolve) => setTimeout(resolve, 0));
    const second = broker.waitForApproval("https://other.example");
    await expect.poll(() => windows.created, waitOptions).toBe(2);
    onlyWindow(windows);
    // The old window going away was the broker's doing, not the user dismissing the new question.
    expect(broker.list().map((pending) => pending.origin)).toEqual(["https://other.example"]);
    await broker.decide("https://other.example", "approve");
    await expect(second).resolves.toBeUndefined();
  });

  it("counts closing the window without an answer as refusing every question it showed", async () => {
    const { broker, windows, store } = setup();
    const app = broker.waitForApproval(origin);
    const folder = broker.waitForWorkspaceConsent("https://approved.example", "/home/me/project");
    await expect.poll(() => windows.open.size, waitOptions).toBe(1);
    windows.closeByUser(onlyWindow(windows));
    await expect(app).rejects.toMatchObject({ code: "APPROVAL_REJECTED", message: expect.stringContaining("closed") as string });
    await expect(folder).rejects.toMatchObject({
      code: "WORKSPACE_PATH_INVALID",
      message: expect.stringContaining("the user did not allow https://approved.example to use /home/me/project") as string,
    });
    expect(await store.list()).toEqual([]);
    expect(broker.list()).toEqual([]);
    // Dismissing is refusing: the same origin is not asked again at once.
    await expect(broker.waitForApproval(origin)).rejects.toMatchObject({ code: "APPROVAL_REJECTED" });
    expect(windows.created).toBe(1);
  });

  it("ignores the window closing after the user answered", async () => {
    const { broker, windows } = setup({ closeDelayMs: 60_000 });
    const waiting = broker.waitForApproval(origin);
    await expect.poll(() => windows.open.size, waitOptions).toBe(1);
    await broker.decide(origin, "approve");
    windows.closeByUser(onlyWindow(windows));
    await expect(waiting).resolves.toBeUndefined();
    expect(broker.refusedOrigins()).toEqual([]);
  });

  it("fails every pending question with OPEN_POPUP_FAILED when no window can open", async () => {
    const { broker, windows } = setup();
    windows.failCreate = new Error("No current window");
    const first = broker.waitForApproval(origin);
    const second = broker.waitForWorkspaceConsent("https://approved.example", "/srv/site");
    await expect(first).rejects.toMatchObject({ code: "OPEN_POPUP_FAILED", details: { reason: "No current window" } });
    await expect(second).rejects.toMatchObject({ code: "OPEN_POPUP_FAILED" });
    expect(broker.list()).toEqual([]);
  });
});

describe("ApprovalBroker: origin approval", () => {
  it("shares one pending approval between waiters of one origin and stores the approval", async () => {
    const { broker, store, windows } = setup();
    const first = broker.waitForApproval(origin);
    const second = broker.waitForApproval(origin);
    expect(broker.list()).toEqual([{ kind: "origin", approvalId: "approval-1", origin, requestedAt: "2025-01-01T10:00:00.000Z" }]);
    await broker.decide(origin, "approve");
    await expect(Promise.all([first, second])).resolves.toEqual([undefined, undefined]);
    expect(await store.list()).toEqual([origin]);
    expect(broker.list()).toEqual([]);
    expect(windows.created).toBe(1);
  });

  it("answers a rejected origin at once during the cooldown, saying when it may ask again", async () => {
    const { broker, windows, storage, advance } = setup({ cooldownMs: 60_000 });
    const waiting = broker.waitForApproval(origin);
    await broker.decide(origin, "reject");
    await expect(waiting).rejects.toMatchObject({ code: "APPROVAL_REJECTED", details: { retryAfter: "2025-01-01T10:01:00.000Z" } });
    expect(storage.values.size).toBe(0);
    expect(broker.refusedOrigins()).toEqual([{ origin, until: "2025-01-01T10:01:00.000Z" }]);

    advance(15_000);
    await expect(broker.waitForApproval(origin)).rejects.toMatchObject({
      code: "APPROVAL_REJECTED",
      message: expect.stringContaining("may ask again in 45 s") as string,
    });
    expect(broker.list()).toEqual([]);
    // Other origins are still asked.
    void broker.waitForApproval("https://other.example").catch(() => undefined);
    expect(broker.list()).toHaveLength(1);

    advance(45_000);
    void broker.waitForApproval(origin).catch(() => undefined);
    expect(broker.list().map((pending) => pending.origin)).toEqual(["https://other.example", origin]);
    expect(broker.refusedOrigins()).toEqual([]);
    await expect.poll(() => windows.created, waitOptions).toBe(1);
  });

  it("ends the cooldown when the user approves the origin later from the extension's pages", async () => {
    const { broker, store } = setup();
    const waiting = broker.waitForApproval(origin);
    await broker.decide(origin, "reject");
    await expect(waiting).rejects.toMatchObject({ code: "APPROVAL_REJECTED" });
    await broker.decide(origin, "approve");
    expect(broker.refusedOrigins()).toEqual([]);
    expect(await store.list()).toEqual([origin]);
  });

  it("times out with APPROVAL_TIMEOUT, without a cooldown", async () => {
    const { broker } = setup({ timeoutMs: 20 });
    await expect(broker.waitForApproval(origin)).rejects.toMatchObject({ code: "APPROVAL_TIMEOUT" });
    expect(broker.list()).toEqual([]);
    expect(broker.refusedOrigins()).toEqual([]);
  });

  it("fails waiters with STORAGE_ERROR when the approval cannot be stored", async () => {
    const { broker, storage } = setup();
    storage.failWrites = true;
    const waiting = broker.waitForApproval(origin);
    await expect(broker.decide(origin, "approve")).rejects.toMatchObject({ code: "STORAGE_ERROR" });
    await expect(waiting).rejects.toMatchObject({ code: "STORAGE_ERROR" });
  });

  it("withdraws an aborted waiter without touching the others", async () => {
    const { broker } = setup();
    const controller = new AbortController();
    const waiting = broker.waitForApproval(origin, controller.signal);
    const other = broker.waitForApproval(origin);
    controller.abort();
    await expect(waiting).rejects.toMatchObject({ code: "EXTENSION_DISCONNECTED" });
    expect(broker.list()).toHaveLength(1);
    await broker.decide(origin, "approve");
    await expect(other).resolves.toBeUndefined();
    const aborted = new AbortController();
    aborted.abort();
    await expect(broker.waitForApproval(origin, aborted.signal)).rejects.toMatchObject({ code: "EXTENSION_DISCONNECTED" });
  });

  it("reports changes of the pending list", async () => {
    const { broker, changes } = setup();
    const waiting = broker.waitForApproval(origin);
    expect(changes()).toBe(1);
    await broker.decide(origin, "approve");
    await waiting;
    expect(changes()).toBeGreaterThanOrEqual(2);
  });
});

describe("ApprovalBroker: folder consent", () => {
  const folder = "/home/me/project";

  it("asks about the folder in the same window and stores the consent per origin and folder", async () => {
    const { broker, consents, storage, windows } = setup();
    const approval = broker.waitForApproval(origin);
    const consent = broker.waitForWorkspaceConsent(origin, folder);
    expect(broker.list()).toMatchObject([
      { kind: "origin", origin },
      { kind: "workspace", origin, path: folder },
    ]);
    await broker.decide(origin, "approve");
    await approval;
    await broker.decideWorkspace(origin, folder, "allow");
    await expect(consent).resolves.toBeUndefined();
    expect(storage.values.get(WORKSPACE_CONSENTS_KEY)).toEqual({ [origin]: [folder] });
    expect(await consents.isAllowed(origin, folder)).toBe(true);
    expect(await consents.isAllowed(origin, "/home/me/other")).toBe(false);
    expect(await consents.isAllowed("https://other.example", folder)).toBe(false);
    expect(windows.created).toBe(1);
  });

  it("refuses with WORKSPACE_PATH_INVALID naming origin and folder, then answers at once during the cooldown", async () => {
    const { broker, consents, advance } = setup({ cooldownMs: 60_000 });
    const consent = broker.waitForWorkspaceConsent(origin, folder);
    await broker.decideWorkspace(origin, folder, "deny");
    await expect(consent).rejects.toMatchObject({
      code: "WORKSPACE_PATH_INVALID",
      message: `the user did not allow ${origin} to use ${folder}`,
    });
    expect(await consents.list()).toEqual({});
    advance(1000);
    await expect(broker.waitForWorkspaceConsent(origin, folder)).rejects.toMatchObject({
      code: "WORKSPACE_PATH_INVALID",
      message: expect.stringContaining("may ask again in 59 s") as string,
    });
    expect(broker.list()).toEqual([]);
    // Another folder is another question.
    void broker.waitForWorkspaceConsent(origin, "/srv/other").catch(() => undefined);
    expect(broker.list()).toMatchObject([{ kind: "workspace", path: "/srv/other" }]);
  });

  it("lets an origin ask about one folder at a time", async () => {
    const { broker } = setup();
    const page = new AbortController();
    const first = broker.waitForWorkspaceConsent(origin, folder, page.signal);
    await expect(broker.waitForWorkspaceConsent(origin, "/srv/other")).rejects.toMatchObject({
      code: "WORKSPACE_PATH_INVALID",
      message: expect.stringContaining("already asking") as string,
    });
    // Another origin may ask about the same folder meanwhile.
    void broker.waitForWorkspaceConsent("https://other.example", folder).catch(() => undefined);
    page.abort();
    await expect(first).rejects.toBeDefined();
    // Nobody waits on the first folder any more, so a new folder replaces it.
    void broker.waitForWorkspaceConsent(origin, "/srv/other").catch(() => undefined);
    expect(broker.list().map((pending) => (pending.kind === "workspace" ? `${pending.origin} ${pending.path}` : ""))).toEqual([
      `https://other.example ${folder}`,
      `${origin} /srv/other`,
    ]);
  });

  it("no longer treats a revoked folder as consented", async () => {
    const { broker, consents } = setup();
    const consent = broker.waitForWorkspaceConsent(origin, folder);
    await broker.decideWorkspace(origin, folder, "allow");
    await consent;
    await consents.revoke(origin, folder);
    expect(await consents.isAllowed(origin, folder)).toBe(false);
  });
});
