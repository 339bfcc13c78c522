import { describe, expect, it } from "vitest";
import type { ApprovalsSnapshot } from "./internal-messages.js";
import { OptionsPage } from "./options-page.js";
import { FULL_ACCESS_WARNING } from "./options-view.js";
import { optionsDocument, type FakeDocument, type FakeElement } from "./testing/fake-dom.js";

const APP = "https://app.example";
const TRUSTED = "http://localhost:3000";

function snapshot(overrides: Partial<ApprovalsSnapshot> = {}): ApprovalsSnapshot {
  return { pending: [], approved: [APP, TRUSTED], folders: {}, refused: [], fullAccess: {}, revocationsPending: {}, ...overrides };
}

const granted = snapshot({ fullAccess: { [TRUSTED]: { grantedAt: "2025-01-01T10:00:00.000Z" } } });

function setup(initial: ApprovalsSnapshot = granted) {
  const document = optionsDocument();
  const page = new OptionsPage(document.asDocument());
  page.render(document.asDocument(), initial);
  return { document, page };
}

function row(document: FakeDocument, origin: string): FakeElement {
  const found = document.querySelector(`li[data-origin="${origin}"]`);
  if (!found) throw new Error(`no row for ${origin}`);
  return found;
}

function actions(document: FakeDocument, origin: string): string[] {
  return row(document, origin)
    .querySelectorAll(".actions [data-action]")
    .map((button) => button.dataset.action ?? "");
}

describe("options page", () => {
  it("shows each approved site's access and the Full Access button that fits it", () => {
    const { document } = setup();
    expect(document.querySelectorAll("#origins li[data-origin]").map((item) => item.dataset.origin)).toEqual([APP, TRUSTED]);
    expect(actions(document, APP)).toEqual(["revoke-approval", "grant-full-access"]);
    expect(actions(document, TRUSTED)).toEqual(["revoke-approval", "revoke-full-access"]);
    expect(row(document, APP).querySelector(".access")?.textContent).toBe("Sandbox only");
    expect(row(document, TRUSTED).querySelector(".access")?.textContent).toBe(
      `Full Access since ${new Date("2025-01-01T10:00:00.000Z").toLocaleString()}`,
    );
    expect(document.querySelector('[data-action="confirm-full-access"]')).toBeNull();
  });

  it("reveals the warning on grant without asking the worker; only confirm asks for the grant", () => {
    const { document, page } = setup();
    expect(page.requestFor("grant-full-access", APP, undefined)).toBeUndefined();
    const warning = row(document, APP).querySelector(".full-access-warning");
    expect(warning?.textContent).toContain(FULL_ACCESS_WARNING);
    for (const phrase of ["run as you", "read and change any of your files", "use the network", "run other programs", "trust completely"]) {
      expect(FULL_ACCESS_WARNING).toContain(phrase);
    }
    expect(warning?.querySelectorAll("[data-action]").map((button) => button.dataset.action)).toEqual(["confirm-full-access", "cancel-full-access"]);
    // Only that row asks.
    expect(row(document, TRUSTED).querySelector(".full-access-warning")).toBeNull();

    // A change notice re-renders the page; the question stays open.
    page.render(document.asDocument(), granted);
    expect(row(document, APP).querySelector('[data-action="confirm-full-access"]')).not.toBeNull();

    expect(page.requestFor("confirm-full-access", APP, undefined)).toEqual({
      request: { type: "grant-full-access", origin: APP },
      done: `${APP} has Full Access.`,
    });
    page.render(document.asDocument(), snapshot({ fullAccess: { [APP]: { grantedAt: "2025-01-02T08:00:00.000Z" }, ...granted.fullAccess } }));
    expect(document.querySelector(".full-access-warning")).toBeNull();
    expect(actions(document, APP)).toEqual(["revoke-approval", "revoke-full-access"]);
  });

  it("closes the warning on cancel, sending nothing", () => {
    const { document, page } = setup();
    page.requestFor("grant-full-access", APP, undefined);
    expect(page.requestFor("cancel-full-access", APP, undefined)).toBeUndefined();
    expect(document.querySelector(".full-access-warning")).toBeNull();
    expect(actions(document, APP)).toEqual(["revoke-approval", "grant-full-access"]);
  });

  it("drops an open warning when the site loses its approval meanwhile", () => {
    const { document, page } = setup();
    page.requestFor("grant-full-access", APP, undefined);
    page.render(document.asDocument(), snapshot({ approved: [TRUSTED] }));
    expect(document.querySelector(`li[data-origin="${APP}"]`)).toBeNull();
    page.render(document.asDocument(), granted);
    expect(document.querySelector(".full-access-warning")).toBeNull();
  });

  it("maps the revoke buttons to the worker's requests", () => {
    const { page } = setup();
    expect(page.requestFor("revoke-full-access", TRUSTED, undefined)?.request).toEqual({ type: "revoke-full-access", origin: TRUSTED });
    expect(page.requestFor("revoke-approval", TRUSTED, undefined)?.request).toEqual({ type: "revoke-origin", origin: TRUSTED });
    expect(page.requestFor("revoke-folder", APP, "/home/me/a")?.request).toEqual({ type: "revoke-folder", origin: APP, path: "/home/me/a" });
    expect(page.requestFor("revoke-folder", APP, undefined)).toBeUndefined();
    expect(page.requestFor("unknown", APP, undefined)).toBeUndefined();
  });

  it("says when a revocation still waits for Pedelec Desktop, and lists a grant left without approval so it can be revoked", () => {
    const { document } = setup(
      snapshot({
        approved: [APP],
        fullAccess: { [TRUSTED]: { grantedAt: "2025-01-01T10:00:00.000Z" } },
        revocationsPending: { [APP]: "2025-01-01T11:00:00.000Z" },
        folders: { [APP]: ["/home/me/a"] },
      }),
    );
    expect(row(document, APP).querySelector(".revocation")?.textContent).toContain("has not confirmed it yet");
    expect(row(document, APP).querySelector('.folders [data-action="revoke-folder"]')?.dataset.path).toBe("/home/me/a");
    expect(row(document, TRUSTED).querySelector(".when")?.textContent).toBe("Not approved");
    expect(actions(document, TRUSTED)).toEqual(["revoke-approval", "revoke-full-access"]);
  });

  it("says so when no site is approved", () => {
    const { document } = setup(snapshot({ approved: [] }));
    expect(document.querySelectorAll("#origins li").map((item) => item.className)).toEqual(["empty"]);
  });
});
