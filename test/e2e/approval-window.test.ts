import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { DEFAULT_EXTENSION_ID } from "@pedelec/protocol/extension-id";
import { startStaticServer } from "../../examples/todo-board/serve.mjs";
import {
  answerApproval,
  approvalWindow,
  isApprovalWindow,
  openExtensionPage,
  openSdkPage,
  setUpE2e,
  watchApprovalWindows,
  type E2eEnvironment,
  type StaticServer,
} from "./harness.js";
import { attempt, installRecorder } from "./page-scripts.js";

let environment: E2eEnvironment | undefined;
const cleanups: (() => Promise<unknown>)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup().catch(() => undefined);
  await environment?.close();
  environment = undefined;
});

/** Every approval window closes once nothing is pending (the broker's grace and close delay are a few seconds). */
const ALL_CLOSED = { timeout: 20_000, interval: 100 };

describe("the approval window in real Chromium", () => {
  it("keeps one approval window through a connect / ask / disconnect loop and closes it once the page stops", async () => {
    // Nothing here may reach the native host: every request stops at approval.
    environment = await setUpE2e({ installHost: false });
    const windows = watchApprovalWindows(environment.context);
    const page = await openSdkPage(environment);
    const startedAt = performance.now();
    // What a hostile page can do: open a port, ask for a session, leave once the extension started asking, repeat.
    const firstAnswers = await page.evaluate(
      async ({ extensionId, rounds }) => {
        const answers: string[] = [];
        for (let round = 0; round < rounds; round += 1) {
          const port = chrome.runtime.connect(extensionId, { name: "pedelec-sdk" });
          answers.push(
            await new Promise<string>((resolve) => {
              const timer = setTimeout(() => resolve("no answer within 5 s"), 5000);
              port.onMessage.addListener((message: { type?: string; stage?: string; error?: { code: string } }) => {
                clearTimeout(timer);
                resolve(message.stage ?? message.error?.code ?? String(message.type));
              });
              port.postMessage({ id: `ask-${round}`, type: "createSession", payload: {} });
            }),
          );
          port.disconnect();
        }
        return answers;
      },
      { extensionId: DEFAULT_EXTENSION_ID, rounds: 30 },
    );
    const loopMs = performance.now() - startedAt;
    expect(firstAnswers).toEqual(Array.from({ length: 30 }, () => "awaiting-approval"));

    // The window may still be opening when the loop ends: see it open, then see it go.
    await approvalWindow(environment.context);
    await expect.poll(() => environment!.context.pages().filter(isApprovalWindow).length, ALL_CLOSED).toBe(0);
    console.log(
      `approval windows for 30 connect/ask/disconnect rounds in ${Math.round(loopMs)} ms: ` +
        `${windows.opened()} opened, at most ${windows.mostOpenAtOnce()} at once, 0 left open`,
    );
    expect(windows.mostOpenAtOnce()).toBe(1);
    // The rounds rejoined one question: one window for the whole loop, not one per round.
    expect(windows.opened()).toBe(1);
  });

  it("answers a rejected origin at once, without a window, until the user approves it from the options page", async () => {
    environment = await setUpE2e({ installHost: false });
    const origin = new URL(environment.server.url).origin;
    const windows = watchApprovalWindows(environment.context);
    const page = await openSdkPage(environment);
    await installRecorder(page);

    const first = attempt(page, "return await window.create();");
    await answerApproval(environment.context, origin, "reject");
    expect(await first).toMatchObject({ ok: false, code: "APPROVAL_REJECTED" });
    await expect.poll(() => environment!.context.pages().filter(isApprovalWindow).length, ALL_CLOSED).toBe(0);

    const again = await attempt(page, "return await window.create();");
    expect(again).toMatchObject({ ok: false, code: "APPROVAL_REJECTED" });
    expect(again.ok ? "" : again.message).toMatch(/may ask again in \d+ s/);
    expect(windows.opened()).toBe(1);

    const options = await openExtensionPage(environment, "options.html");
    await options.locator(`#refused button[data-action="approve"][data-origin="${origin}"]`).click();
    await expect.poll(() => attempt(page, "return (await window.pedelec.getApprovalStatus()).approved;")).toEqual({ ok: true, value: true });
    // Approved now: the request passes approval and fails only because no native host is registered.
    expect(await attempt(page, "return await window.create();")).toMatchObject({ ok: false, code: "NATIVE_HOST_UNAVAILABLE" });
    expect(windows.opened()).toBe(1);
  });

  it("shows ten origins asking at once in one window", async () => {
    environment = await setUpE2e({ installHost: false });
    const site = await mkdtemp(join(tmpdir(), "pedelec-e2e-frames-"));
    cleanups.push(() => rm(site, { recursive: true, force: true }));
    await writeFile(join(site, "index.html"), "<!doctype html><meta charset=utf-8><title>frame</title>");
    const servers: StaticServer[] = [];
    for (let index = 0; index < 10; index += 1) {
      const server = (await startStaticServer({ root: site, host: "127.0.0.1", port: 0 })) as StaticServer;
      servers.push(server);
      cleanups.push(() => server.close());
    }
    // Different ports are different origins.
    const origins = servers.map((server) => new URL(server.url).origin);
    const windows = watchApprovalWindows(environment.context);

    const parent = await openSdkPage(environment);
    await parent.evaluate(
      async (urls) => {
        await Promise.all(
          urls.map(
            (url) =>
              new Promise((resolve) => {
                const frame = document.createElement("iframe");
                frame.src = url;
                frame.onload = resolve;
                document.body.append(frame);
              }),
          ),
        );
      },
      servers.map((server) => server.url),
    );
    const frames = parent.frames().filter((frame) => frame !== parent.mainFrame());
    expect(frames).toHaveLength(10);
    // Every frame asks at the same moment and keeps its port open, recording what the extension answers.
    await Promise.all(
      frames.map((frame) =>
        frame.evaluate((extensionId) => {
          const w = window as unknown as { answer?: string; port?: chrome.runtime.Port };
          w.port = chrome.runtime.connect(extensionId, { name: "pedelec-sdk" });
          w.port.onMessage.addListener((message: { ok?: boolean; error?: { code: string } }) => {
            if ("ok" in message) w.answer = message.ok ? "ok" : message.error!.code;
          });
          w.port.postMessage({ id: "ask", type: "createSession", payload: {} });
        }, DEFAULT_EXTENSION_ID),
      ),
    );

    const approval = await approvalWindow(environment.context);
    const listed = approval.locator('#pending li[data-kind="origin"] .origin');
    await expect.poll(async () => (await listed.allTextContents()).sort(), { timeout: 15_000 }).toEqual([...origins].sort());
    expect(windows.mostOpenAtOnce()).toBe(1);

    // The user answers all ten in that one window.
    for (const origin of origins) await answerApproval(environment.context, origin, "approve");
    const answers = () => Promise.all(frames.map((frame) => frame.evaluate(() => (window as unknown as { answer?: string }).answer)));
    // Approved, then stopped by the missing native host: each frame got past the question.
    await expect.poll(answers, { timeout: 15_000 }).toEqual(Array.from({ length: 10 }, () => "NATIVE_HOST_UNAVAILABLE"));
    await expect.poll(() => environment!.context.pages().filter(isApprovalWindow).length, ALL_CLOSED).toBe(0);
    console.log(`approval windows for ten origins asking at once: ${windows.opened()} opened, at most ${windows.mostOpenAtOnce()} at once`);
    expect(windows.opened()).toBe(1);
  });
});
