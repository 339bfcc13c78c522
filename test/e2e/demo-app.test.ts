import { afterEach, describe, expect, it } from "vitest";
import { openConnectedDemo, setUpDemo } from "./demo-page.js";
import type { E2eEnvironment } from "./harness.js";

let environment: E2eEnvironment | undefined;
afterEach(async () => {
  await environment?.close();
  environment = undefined;
});

describe("the demo app in real Chromium", () => {
  it("lets the agent add a card to the board through a frontend tool, and shows errors by layer", async () => {
    environment = await setUpDemo();
    const page = await openConnectedDemo(environment);
    // Once the site is approved, the picker shows what this machine can run and why the rest cannot.
    await expect.poll(() => page.locator('#provider option[value="claude"]').getAttribute("data-available"), { timeout: 10_000 }).toBe("true");
    expect(await page.locator('#provider option[value="ollama"]').getAttribute("data-available")).toBe("false");
    // No key configured: the reason says how to set one.
    expect(await page.locator('#provider-reasons li[data-provider="ollama"]').textContent()).toContain("pedelec config set ollama.apiKey");

    const cardsBefore = await page.locator("#board .card").count();
    await page.locator("#message").fill('call-tool add_todo {"title":"Write the release notes","column":"doing"}');
    await page.locator("#send").click();
    const card = page.locator('#board .card[data-column="doing"]', { hasText: "Write the release notes" });
    await card.waitFor({ timeout: 15_000 });
    expect(await page.locator("#board .card").count()).toBe(cardsBefore + 1);
    await expect.poll(() => page.locator("#status").textContent(), { timeout: 15_000 }).toBe("idle");
    const answer = (await page.locator("#messages .message.agent").last().textContent()) ?? "";
    expect(answer).toContain("Tool add_todo returned:");
    expect(answer).toContain("Write the release notes");
    // The agent called the page's tool as its own tool (the session's MCP server), and the board shows that call.
    expect(await page.locator('#activity .activity[data-kind="tool"]').count()).toBeGreaterThan(0);

    // The page's own validation answers the agent when Core's schema check cannot know the id is wrong.
    await page.locator("#message").fill('call-tool move_todo {"id":"no-such-card","column":"done"}');
    await page.locator("#send").click();
    await expect
      .poll(async () => (await page.locator("#messages .message.agent").last().textContent()) ?? "", { timeout: 15_000 })
      .toContain("TOOL_HANDLER_ERROR");

    await page.locator("#message").fill("exit-with 7 upstream exploded");
    await page.locator("#send").click();
    const error = page.locator('#errors .error[data-code="PROVIDER_FAILED"]');
    await error.waitFor({ timeout: 15_000 });
    expect(await error.count()).toBe(1);
    expect(await error.getAttribute("data-layer")).toBe("provider");
    expect(await error.textContent()).toContain("upstream exploded");
  });
});
