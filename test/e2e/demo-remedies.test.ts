import { afterEach, describe, expect, it } from "vitest";
import { openConnectedDemo, setUpDemo } from "./demo-page.js";
import type { E2eEnvironment } from "./harness.js";

let environment: E2eEnvironment | undefined;
afterEach(async () => {
  await environment?.close();
  environment = undefined;
});

describe("the demo app's errors and a lost Core, in real Chromium", () => {
  it("shows the provider's sign-in command under the error, and resumes the session after Core stops mid-turn", async () => {
    environment = await setUpDemo();
    const page = await openConnectedDemo(environment);

    // Signed out: the remedy names Claude Code's own sign-in command, worked out from the adapter's details.
    await page.locator("#message").fill("not-logged-in");
    await page.locator("#send").click();
    const signedOut = page.locator('#errors .error[data-code="PROVIDER_NOT_AUTHENTICATED"]');
    await signedOut.waitFor({ timeout: 15_000 });
    expect(await signedOut.locator(".error-remedy code").allTextContents()).toContain("claude auth login");

    // Core stops while a turn runs: the page stops looking busy and says the session resumes.
    await page.locator("#message").fill("hang");
    await page.locator("#send").click();
    await expect.poll(() => page.locator("#status").textContent(), { timeout: 15_000 }).toBe("running");
    expect((await environment.pedelec("stop")).code).toBe(0);
    await expect.poll(() => page.locator("#status").textContent(), { timeout: 15_000 }).toBe("core stopped");
    expect(await page.locator("#messages .message.note").last().textContent()).toContain("Core stopped: your session resumes on the next message.");
    const lost = page.locator('#errors .error[data-code="CORE_RUNTIME_UNAVAILABLE"]');
    expect(await lost.count()).toBe(1);
    expect(await lost.locator(".error-remedy").textContent()).toContain("your session resumes on the next message");
    expect(await page.locator("#send").isDisabled()).toBe(false);

    // The next message starts Core again and goes on in the same session.
    await page.locator("#message").fill("back again");
    await page.locator("#send").click();
    await expect
      .poll(async () => (await page.locator("#messages .message.agent").last().textContent()) ?? "", { timeout: 30_000 })
      .toContain("echo: back again");
    await expect.poll(() => page.locator("#status").textContent(), { timeout: 15_000 }).toBe("idle");
  });
});
