import { join } from "node:path";
import type { Page } from "playwright-core";
import { answerApproval, repoRoot, setUpE2e, type E2eEnvironment } from "./harness.js";

/** An e2e environment whose site is the built to-do board demo. */
export function setUpDemo(): Promise<E2eEnvironment> {
  return setUpE2e({ siteDir: join(repoRoot, "examples/todo-board/dist") });
}

/**
 * Opens the demo, picks the claude stand-in, clicks Connect and approves the origin as the user would; resolves once
 * the demo shows its session idle.
 */
export async function openConnectedDemo(environment: E2eEnvironment): Promise<Page> {
  const page = await environment.context.newPage();
  await page.goto(environment.server.url);
  await page.locator('#approval[data-installed="true"]').waitFor({ state: "attached", timeout: 10_000 });
  await page.locator("#provider").selectOption("claude");
  await page.locator("#connect").click();
  await answerApproval(environment.context, new URL(environment.server.url).origin, "approve");
  await page.waitForFunction(() => document.querySelector("#status")?.textContent === "idle", undefined, { timeout: 15_000 });
  return page;
}
