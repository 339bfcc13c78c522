import { describe, expect, it } from "vitest";
import { DesktopLinkWatch } from "./desktop-link-watch.js";
import type { DesktopLinkRequest, DesktopLinkResponse, DesktopLinkStatus } from "./internal-messages.js";
import { describeDesktopLink, renderDesktopLink } from "./popup-view.js";
import { FakeDocument, type FakeElement } from "./testing/fake-dom.js";

const EXTENSION_ID = "abcdefghijklmnopabcdefghijklmnop";

function popupDocument(): { document: FakeDocument; link: FakeElement } {
  const document = new FakeDocument();
  const link = document.createElement("div");
  link.id = "desktop-link";
  const status = document.createElement("p");
  status.id = "status";
  document.body.append(link, status);
  return { document, link };
}

function rendered(status: DesktopLinkStatus) {
  const { document, link } = popupDocument();
  renderDesktopLink(document.asDocument(), status, EXTENSION_ID);
  return {
    state: link.dataset.state,
    headline: link.querySelector(".link-headline")?.textContent,
    reason: link.querySelector(".link-reason")?.textContent,
    remedy: link.querySelector(".link-remedy")?.textContent,
    commands: link.querySelectorAll(".link-remedy code").map((code) => code.textContent),
    check: link.querySelector('button[data-action="check-desktop-link"]') !== null,
  };
}

const notFound = {
  state: "host-missing",
  error: {
    code: "NATIVE_HOST_UNAVAILABLE",
    message: "the Pedelec native host is unavailable: Specified native messaging host not found.",
    details: { lastError: "Specified native messaging host not found." },
  },
} as const satisfies DesktopLinkStatus;

describe("the popup's desktop link", () => {
  it("shows a connected link with Core's version and nothing to do", () => {
    expect(rendered({ state: "connected", version: "0.1.0" })).toEqual({
      state: "connected",
      headline: "Connected to Pedelec Core 0.1.0",
      reason: undefined,
      remedy: undefined,
      commands: [],
      check: false,
    });
  });

  it("shows connecting while the host or Core starts", () => {
    expect(rendered({ state: "connecting" })).toMatchObject({ state: "connecting", headline: "Connecting…", check: false });
  });

  it("names the install command, with Chrome's reason, when the native host is not found", () => {
    expect(rendered(notFound)).toEqual({
      state: "host-missing",
      headline: "The native host is not installed",
      reason: "Specified native messaging host not found.",
      remedy: "Run npx pedelec install in your Pedelec checkout, then press Check now.",
      commands: ["npx pedelec install"],
      check: true,
    });
  });

  it("names this extension's id when the host is registered for another one", () => {
    const forbidden: DesktopLinkStatus = {
      state: "host-missing",
      error: { code: "NATIVE_HOST_UNAVAILABLE", message: "…", details: { lastError: "Access to the specified native messaging host is forbidden." } },
    };
    expect(rendered(forbidden)).toMatchObject({
      headline: "The native host does not accept this extension",
      reason: "Access to the specified native messaging host is forbidden.",
      commands: [`npx pedelec install --extension-id ${EXTENSION_ID}`],
    });
  });

  it("shows why Core is unavailable and points at the doctor", () => {
    const reason = "Pedelec Core did not start within 10 s; see /home/me/.pedelec/logs/core.log";
    expect(rendered({ state: "core-unavailable", version: "0.1.0", error: { code: "CORE_RUNTIME_UNAVAILABLE", message: reason } })).toEqual({
      state: "core-unavailable",
      headline: "Pedelec Core is not available",
      reason,
      remedy: "Run npx pedelec doctor to see why, then press Check now.",
      commands: ["npx pedelec doctor"],
      check: true,
    });
  });

  it("says the link is not used yet, and offers to check", () => {
    expect(rendered({ state: "not-connected" })).toMatchObject({ state: "not-connected", headline: "Not connected yet", check: true });
  });

  it("says a lost host reconnects on the next request", () => {
    const lost: DesktopLinkStatus = {
      state: "disconnected",
      error: { code: "NATIVE_CONNECTION_CLOSED", message: "the native host connection closed: Native host has exited." },
    };
    expect(describeDesktopLink(lost, EXTENSION_ID)).toEqual({
      headline: "The native host stopped",
      reason: "the native host connection closed: Native host has exited.",
      remedy: "Pedelec reconnects on the next request. If it keeps stopping, run `npx pedelec doctor`.",
      canCheck: true,
    });
  });
});

/** A worker stand-in whose answers the test changes, recording what it was asked; a check waits for `releaseCheck()`. */
function fakeWorker(initial: DesktopLinkStatus) {
  let current: DesktopLinkResponse = { ok: true, link: initial };
  const asked: DesktopLinkRequest["type"][] = [];
  let release: (() => void) | undefined;
  return {
    asked,
    answer(response: DesktopLinkResponse): void {
      current = response;
    },
    releaseCheck(): void {
      release?.();
    },
    ask: async (request: DesktopLinkRequest): Promise<DesktopLinkResponse> => {
      asked.push(request.type);
      if (request.type === "check-desktop-link") await new Promise<void>((resolve) => (release = resolve));
      return current;
    },
  };
}

describe("DesktopLinkWatch", () => {
  it("shows the state at once, then refreshes it while the popup is open", async () => {
    const worker = fakeWorker({ state: "not-connected" });
    const shown: DesktopLinkStatus[] = [];
    const watch = new DesktopLinkWatch({ ask: worker.ask, show: (status) => shown.push(status), showError: () => undefined, intervalMs: 20 });
    watch.start();
    await expect.poll(() => shown.at(-1), { timeout: 1_000, interval: 5 }).toEqual({ state: "not-connected" });
    worker.answer({ ok: true, link: { state: "connected", version: "0.1.0" } });
    await expect.poll(() => shown.at(-1), { timeout: 1_000, interval: 5 }).toEqual({ state: "connected", version: "0.1.0" });
    watch.stop();
    const count = worker.asked.length;
    await new Promise((resolve) => setTimeout(resolve, 80));
    expect(worker.asked.length).toBe(count);
  });

  it("checks on demand, and a check's answer older than a poll's does not overwrite it", async () => {
    const worker = fakeWorker({ state: "not-connected" });
    const shown: DesktopLinkStatus[] = [];
    const watch = new DesktopLinkWatch({ ask: worker.ask, show: (status) => shown.push(status), showError: () => undefined, intervalMs: 10 });
    watch.start();
    const checked = watch.check();
    worker.answer({ ok: true, link: { state: "connecting" } });
    await expect.poll(() => shown.at(-1), { timeout: 1_000, interval: 5 }).toEqual({ state: "connecting" });
    worker.answer({ ok: true, link: { state: "connected", version: "0.1.0" } });
    await expect.poll(() => shown.at(-1), { timeout: 1_000, interval: 5 }).toEqual({ state: "connected", version: "0.1.0" });
    watch.stop();
    worker.releaseCheck();
    await checked;
    expect(worker.asked).toContain("check-desktop-link");
    expect(shown.at(-1)).toEqual({ state: "connected", version: "0.1.0" });
  });

  it("shows the worker's failure instead of a state", async () => {
    const worker = fakeWorker({ state: "not-connected" });
    worker.answer({ ok: false, error: { code: "EXTENSION_UNAVAILABLE", message: "Could not establish connection. Receiving end does not exist." } });
    const errors: string[] = [];
    const watch = new DesktopLinkWatch({ ask: worker.ask, show: () => undefined, showError: (message) => errors.push(message), intervalMs: 1_000 });
    watch.start();
    await expect.poll(() => errors, { timeout: 1_000, interval: 5 }).toEqual(["Could not establish connection. Receiving end does not exist."]);
    watch.stop();
  });
});
