import { afterEach, describe, expect, it } from "vitest";
import { openExtensionPage, setUpE2e, type E2eEnvironment } from "./harness.js";

let environment: E2eEnvironment | undefined;
afterEach(async () => {
  await environment?.close();
  environment = undefined;
});

describe("the popup's desktop link in real Chromium", () => {
  it("names `npx pedelec install` when Chrome cannot find the native host", async () => {
    environment = await setUpE2e({ installHost: false });
    const popup = await openExtensionPage(environment, "popup.html");
    const link = popup.locator("#desktop-link");
    await expect.poll(() => link.getAttribute("data-state"), { timeout: 10_000 }).toBe("not-connected");

    await link.locator('button[data-action="check-desktop-link"]').click();

    await expect.poll(() => link.getAttribute("data-state"), { timeout: 15_000 }).toBe("host-missing");
    expect(await link.locator(".link-reason").textContent()).toBe("Specified native messaging host not found.");
    expect(await link.locator(".link-remedy code").allTextContents()).toEqual(["npx pedelec install"]);
  });

  it("shows the link connected, with the version, once the host has started Core, and unavailable after Core stops", async () => {
    environment = await setUpE2e();
    const popup = await openExtensionPage(environment, "popup.html");
    const link = popup.locator("#desktop-link");
    await expect.poll(() => link.getAttribute("data-state"), { timeout: 10_000 }).toBe("not-connected");

    await link.locator('button[data-action="check-desktop-link"]').click();

    await expect.poll(() => link.getAttribute("data-state"), { timeout: 20_000 }).toBe("connected");
    expect(await link.locator(".link-headline").textContent()).toMatch(/^Connected to Pedelec Core \d+\.\d+\.\d+/);
    // Core really runs: the command line sees it.
    expect((await environment.pedelec("status")).code).toBe(0);

    // Core stops; the open popup notices on its own.
    expect((await environment.pedelec("stop")).code).toBe(0);
    await expect.poll(() => link.getAttribute("data-state"), { timeout: 15_000 }).toMatch(/^(core-unavailable|disconnected)$/);
    expect(await link.locator(".link-remedy code").allTextContents()).toContain("npx pedelec doctor");
  });
});
