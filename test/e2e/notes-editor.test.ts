import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterEach, describe, expect, it } from "vitest";
import { answerApproval, repoRoot, setUpE2e, standInProcessesIn, type E2eEnvironment } from "./harness.js";

let environment: E2eEnvironment | undefined;
afterEach(async () => {
  await environment?.close();
  environment = undefined;
});

/** Makes the claude stand-in call `tool` with `args` through pedelec-cli, as a model would. */
async function askForToolCall(page: Page, tool: string, args: object): Promise<void> {
  await page.locator("#message").fill(`call-tool ${tool} ${JSON.stringify(args)}`);
  await page.locator("#send").click();
}

const turnOutcome = (page: Page) =>
  page
    .locator("#turn-outcome")
    .getAttribute("data-outcome", { timeout: 1_000 })
    .catch(() => null);

describe("the notes editor example in real Chromium", () => {
  it("waits for the user's Accept before an agent's edit lands, and closes the dialog when the turn is cancelled", async () => {
    environment = await setUpE2e({ siteDir: join(repoRoot, "examples/notes-editor/dist") });
    const page = await environment.context.newPage();
    await page.goto(environment.server.url);
    await page.locator("#provider").selectOption("claude");
    await page.locator("#connect").click();
    await answerApproval(environment.context, new URL(environment.server.url).origin, "approve");
    await expect.poll(() => page.locator("#status").textContent(), { timeout: 15_000 }).toBe("idle");
    const noteText = page.locator('#note-text[data-note-id="groceries"]');
    const before = await noteText.inputValue();
    expect(before).toBe("Milk\nEggs\nBread");

    // A turn in which the agent proposes an edit: the call waits in the dialog until the user accepts.
    await askForToolCall(page, "propose_edit", { id: "groceries", text: "Milk\nEggs\nBread\nCoffee", reason: "Coffee was missing." });
    const dialog = page.locator("#edit-dialog");
    await dialog.waitFor({ timeout: 15_000 });
    expect(await dialog.getByLabel("Proposed text").textContent()).toBe("Milk\nEggs\nBread\nCoffee");
    expect(await page.locator("#status").textContent()).toBe("waiting_tool_result");
    expect(await noteText.inputValue()).toBe(before);

    await dialog.getByRole("button", { name: "Accept" }).click();
    await dialog.waitFor({ state: "detached", timeout: 5_000 });
    await expect.poll(() => noteText.inputValue(), { timeout: 5_000 }).toBe("Milk\nEggs\nBread\nCoffee");
    await expect.poll(() => turnOutcome(page), { timeout: 15_000 }).toBe("completed");
    const answer = (await page.locator("#messages .message.assistant").last().textContent()) ?? "";
    expect(answer).toContain("Tool propose_edit returned:");
    expect(answer).toContain('"outcome":"applied"');
    expect(await page.locator('#activity li[data-kind="tool"]').count()).toBeGreaterThan(0);
    // The tokens the agent's CLI reported for the turn.
    await expect
      .poll(() => page.locator("#usage").textContent(), { timeout: 5_000 })
      .toMatch(/^Tokens: [1-9][\d,]* in \(\d+ cached\) · [1-9][\d,]* out$/);

    // A second proposal, and the user cancels the turn while its dialog is open.
    await askForToolCall(page, "replace_note_text", { id: "groceries", find: "Coffee", replace: "Tea" });
    await dialog.waitFor({ timeout: 15_000 });
    expect(await dialog.getByLabel("Proposed text").textContent()).toBe("Milk\nEggs\nBread\nTea");
    await page.locator("#cancel").click();
    await dialog.waitFor({ state: "detached", timeout: 10_000 });
    await expect.poll(() => turnOutcome(page), { timeout: 15_000 }).toBe("TURN_CANCELLED");
    expect(await page.locator("#status").textContent()).toBe("idle");
    expect(await noteText.inputValue()).toBe("Milk\nEggs\nBread\nCoffee");
    // A cancel is no error, and the agent (and the pedelec-cli call it was waiting in) is gone.
    expect(await page.locator("#error").count()).toBe(0);
    await expect.poll(() => standInProcessesIn(environment!.home), { timeout: 10_000 }).toEqual([]);
  });
});
