import { access, mkdtemp, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BrowserContext, Locator } from "playwright-core";
import { afterEach, describe, expect, it } from "vitest";
import {
  answerApproval,
  answerWorkspaceConsent,
  approvalWindow,
  isApprovalWindow,
  openExtensionPage,
  openSdkPage,
  setUpE2e,
  watchApprovalWindows,
  type E2eEnvironment,
} from "./harness.js";
import { attempt, installRecorder } from "./page-scripts.js";

let environment: E2eEnvironment | undefined;
const folders: string[] = [];

afterEach(async () => {
  await environment?.close();
  environment = undefined;
  for (const folder of folders.splice(0)) await rm(folder, { recursive: true, force: true });
});

async function freshFolder(): Promise<string> {
  // Resolved, so the path the page asks for is exactly the folder on disk.
  const folder = await realpath(await mkdtemp(join(tmpdir(), "pedelec-e2e-folder-")));
  folders.push(folder);
  return folder;
}

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}

/**
 * Waits until the approval window shows the folder question for `path` and returns that item. Retries when it caught
 * a window that was closing just then.
 */
async function folderQuestion(context: BrowserContext, path: string): Promise<Locator> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const window = await approvalWindow(context);
    const question = window.locator('#pending li[data-kind="workspace"]').filter({ has: window.locator(`[data-path="${path}"]`) });
    try {
      await question.waitFor({ timeout: Math.max(1, deadline - Date.now()) });
      return question;
    } catch (error) {
      if (!window.isClosed() || Date.now() > deadline) throw error;
    }
  }
}

function createIn(folder: string): string {
  return `return await window.create({ workspace: { path: ${JSON.stringify(folder)} } });`;
}

describe("folder consent in real Chromium", () => {
  it("lets the user, not the page, pick the folder: deny, allow, remember, revoke, ask again", async () => {
    environment = await setUpE2e({ startCore: true });
    const origin = new URL(environment.server.url).origin;
    const windows = watchApprovalWindows(environment.context);
    const page = await openSdkPage(environment);
    await installRecorder(page);
    const denied = await freshFolder();
    const allowed = await freshFolder();

    // First ask: the origin, then the folder, in the same window. The user refuses the folder.
    const refused = attempt(page, createIn(denied));
    await answerApproval(environment.context, origin, "approve");
    const question = await folderQuestion(environment.context, denied);
    // The folder is shown as is, and the origin asking for it is named.
    expect(await question.locator(".folder").textContent()).toBe(denied);
    expect(await question.textContent()).toContain(origin);
    await answerWorkspaceConsent(environment.context, origin, denied, "deny");
    const refusal = await refused;
    expect(refusal).toMatchObject({ ok: false, code: "WORKSPACE_PATH_INVALID" });
    expect(refusal.ok ? "" : refusal.message).toContain(`the user did not allow ${origin} to use ${denied}`);
    // Core never saw the request.
    expect(await exists(join(denied, ".pedelec-runtime"))).toBe(false);
    // Refused a moment ago: answered at once, no window.
    const opened = windows.opened();
    expect(await attempt(page, createIn(denied))).toMatchObject({ ok: false, code: "WORKSPACE_PATH_INVALID" });
    expect(windows.opened()).toBe(opened);

    // Another folder: the user allows it, and the bridge timeout waits for the answer (paused while asking).
    const bridgeTimeoutMs = 2500;
    await page.evaluate((timeout) => {
      const w = window as unknown as Record<string, any>;
      w.pedelec = new w.sdk.Pedelec({ bridgeTimeoutMs: timeout });
    }, bridgeTimeoutMs);
    const created = attempt<{ sessionId: string; workspace: { path: string } }>(page, createIn(allowed));
    const askedAt = Date.now();
    await folderQuestion(environment.context, allowed);
    // Longer than the page's bridge timeout: the request must still be waiting.
    await page.waitForTimeout(Math.max(0, bridgeTimeoutMs + 500 - (Date.now() - askedAt)));
    await answerWorkspaceConsent(environment.context, origin, allowed, "allow");
    const session = await created;
    expect(session, JSON.stringify(session)).toMatchObject({ ok: true, value: { workspace: { path: allowed } } });
    expect(await exists(join(allowed, ".pedelec-runtime"))).toBe(true);
    await page.evaluate(() => (window as unknown as { session: { end(): Promise<void> } }).session.end());

    // Remembered: the next session in that folder starts without a question.
    const before = windows.opened();
    expect(await attempt(page, createIn(allowed))).toMatchObject({ ok: true, value: { workspace: { path: allowed } } });
    expect(windows.opened()).toBe(before);
    await page.evaluate(() => (window as unknown as { session: { end(): Promise<void> } }).session.end());
    await expect.poll(() => environment!.context.pages().filter(isApprovalWindow).length, { timeout: 20_000 }).toBe(0);

    // The options page lists the origin with its folder (only the allowed one); the user revokes the folder.
    const options = await openExtensionPage(environment, "options.html");
    const row = options.locator(`[data-origin="${origin}"]`);
    await expect.poll(() => row.locator(".folder").allTextContents(), { timeout: 10_000 }).toEqual([allowed]);
    expect(await row.locator('[data-action="revoke-approval"]').count()).toBe(1);
    await row.locator(`[data-action="revoke-folder"][data-path="${allowed}"]`).click();
    await expect.poll(() => row.locator(".folder").count(), { timeout: 10_000 }).toBe(0);
    expect(await row.count()).toBe(1);

    // Revoked: the next create asks again.
    const askedAgain = attempt(page, createIn(allowed));
    await folderQuestion(environment.context, allowed);
    await answerWorkspaceConsent(environment.context, origin, allowed, "allow");
    expect(await askedAgain).toMatchObject({ ok: true, value: { workspace: { path: allowed } } });
  });

  it("refuses system folders and paths with .. without opening a window, even for an unapproved origin", async () => {
    environment = await setUpE2e({ startCore: true });
    const windows = watchApprovalWindows(environment.context);
    const page = await openSdkPage(environment, environment.otherOriginUrl);
    await installRecorder(page);
    for (const path of ["/etc", "/", "/usr/", "/tmp/../etc", "relative/folder"]) {
      const result = await attempt(page, createIn(path));
      expect(result, `${path}: ${JSON.stringify(result)}`).toMatchObject({ ok: false, code: "WORKSPACE_PATH_INVALID" });
    }
    // The status round trip goes through the same worker after the refusals, so any window would be open by now.
    expect(await attempt(page, "return (await window.pedelec.getApprovalStatus()).approved;")).toEqual({ ok: true, value: false });
    expect(windows.opened()).toBe(0);
    expect(environment.context.pages().filter(isApprovalWindow)).toEqual([]);
  });
});
