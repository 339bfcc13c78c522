import { describe, expect, it } from "vitest";
import { SingleApprovalWindow } from "./approval-window.js";
import { FakeWindows } from "./testing/fakes.js";

const URL = "chrome-extension://pedelec/popup.html?window=approval";
const waitOptions = { timeout: 2000, interval: 2 };

function setup(windows = new FakeWindows()) {
  const window = new SingleApprovalWindow(windows, URL);
  let dismissals = 0;
  window.onDismissed(() => {
    dismissals += 1;
  });
  return { windows, window, dismissals: () => dismissals };
}

describe("SingleApprovalWindow", () => {
  it("creates one window for a burst of shows and brings it forward afterwards", async () => {
    const { windows, window } = setup();
    await Promise.all(Array.from({ length: 10 }, () => window.show()));
    expect(windows.created).toBe(1);
    expect([...windows.open.values()]).toEqual([URL]);
    expect(windows.focused).toBe(9);
  });

  it("reports the user closing the window, but not its own close", async () => {
    const { windows, window, dismissals } = setup();
    await window.show();
    await window.close();
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(windows.open.size).toBe(0);
    expect(dismissals()).toBe(0);

    await window.show();
    windows.closeByUser([...windows.open.keys()][0]!);
    expect(dismissals()).toBe(1);
    // The next show opens a new window.
    await window.show();
    expect(windows.created).toBe(3);
  });

  it("opens a new window when the old one vanished before the browser said so", async () => {
    const { windows, window, dismissals } = setup();
    await window.show();
    windows.open.clear();
    await window.show();
    expect(windows.created).toBe(2);
    expect(windows.open.size).toBe(1);
    expect(dismissals()).toBe(0);
  });

  it("never leaves two windows when shows and closes interleave", async () => {
    const { windows, window } = setup();
    await Promise.all([window.show(), window.close(), window.show(), window.close(), window.show()]);
    expect(windows.open.size).toBe(1);
    expect(windows.mostOpenAtOnce).toBe(1);
  });

  it("closes approval windows a previous worker left open, without counting that as a dismissal", async () => {
    const windows = new FakeWindows();
    const stray = windows.openStray(URL);
    const unrelated = windows.openStray("https://example.com/");
    const { window, dismissals } = setup(windows);
    await window.show();
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(windows.open.has(stray)).toBe(false);
    expect(windows.open.has(unrelated)).toBe(true);
    expect([...windows.open.values()].filter((url) => url === URL)).toHaveLength(1);
    expect(dismissals()).toBe(0);
  });

  it("rejects show() when no window can be created", async () => {
    const windows = new FakeWindows();
    windows.failCreate = new Error("No current window");
    const { window } = setup(windows);
    await expect(window.show()).rejects.toThrow("No current window");
    windows.failCreate = undefined;
    await expect(window.show()).resolves.toBeUndefined();
    await expect.poll(() => windows.open.size, waitOptions).toBe(1);
  });
});
