import { request as httpRequest } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { runOpenCommand } from "@pedelec/cli/open-command";
import { approvedSession, setUpE2e, type E2eEnvironment } from "./harness.js";
import { logOf } from "./page-scripts.js";

let environment: E2eEnvironment | undefined;

afterEach(async () => {
  await environment?.close();
  environment = undefined;
});

/** A request to the panel's port with a Host header of the test's choosing; resolves with the status and body. */
function rawRequest(port: number, path: string, host: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest({ host: "127.0.0.1", port, path, headers: { host } }, (incoming) => {
      let body = "";
      incoming.on("data", (chunk: Buffer) => (body += chunk.toString()));
      incoming.on("end", () => resolve({ status: incoming.statusCode ?? 0, body }));
    });
    outgoing.on("error", reject);
    outgoing.end();
  });
}

describe("the control panel in real Chromium", () => {
  it("shows the page's session and its events as they stream, edits an effort profile the next session uses, and refuses strangers", async () => {
    environment = await setUpE2e();
    const started = environment;
    // `pedelec open` finds no Core, starts one the way `pedelec start --detach` does, and opens the panel.
    const out: string[] = [];
    const opened: string[] = [];
    const code = await runOpenCommand(
      [],
      { out: (line) => out.push(line), err: (line) => out.push(line), env: environment.env },
      {
        launchCore: async () => {
          const result = await started.pedelec("start", "--detach");
          if (result.code !== 0) throw new Error(result.stderr);
        },
        openUrl: async (url) => void opened.push(url),
      },
    );
    expect(code).toBe(0);
    // The browser is sent a one-time sign-in link; what is printed is the panel's clean address.
    const url = out[0]!;
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/panel\/$/);
    expect(opened).toHaveLength(1);
    const signInLink = opened[0]!;
    expect(signInLink).toMatch(/\/sign-in\/[A-Za-z0-9_-]{43}$/);
    const panelUrl = new URL(url);

    const { page, sessionId } = await approvedSession(environment);
    const origin = new URL(environment.server.url).origin;

    const panel = await environment.context.newPage();
    await panel.goto(signInLink);
    // The code became an HttpOnly cookie, and the address bar holds neither it nor the secret.
    expect(panel.url()).toBe(url);
    const cookies = await environment.context.cookies(url);
    expect(cookies.find((cookie) => cookie.name === `pedelec-panel-${panelUrl.port}`)).toMatchObject({
      httpOnly: true,
      sameSite: "Strict",
      path: "/panel/",
    });
    const row = panel.locator(`tr[data-session-id="${sessionId}"]`);
    await row.waitFor({ timeout: 10_000 });
    await expect(row.textContent()).resolves.toContain(origin);
    await expect(row.textContent()).resolves.toContain("claude");

    // Live events: what the page's turn produces appears while it runs.
    await panel.click('nav a[data-page="events"]');
    await panel.locator('[data-role="stream-state"]', { hasText: "Live." }).waitFor({ timeout: 10_000 });
    expect(await page.evaluate(() => (window as any).send("reply: Hello to the panel"))).toEqual({ ok: true });
    const completed = panel.locator(`li[data-session-id="${sessionId}"][data-event-type="chat-completed"]`);
    await completed.waitFor({ timeout: 10_000 });
    await expect(completed.textContent()).resolves.toContain("Hello to the panel");
    expect(await panel.locator(`li[data-event-type="chat-delta"]`).count()).toBeGreaterThan(0);
    await panel.fill('input[data-filter="type"]', "chat-completed");
    expect(
      await panel.locator('ol[data-role="events"] li:not([hidden])').evaluateAll((rows) => rows.map((item) => item.getAttribute("data-event-type"))),
    ).toEqual(["chat-completed"]);

    // Providers: a refused profile shows Core's reason next to its field; an accepted one is saved.
    await panel.click('nav a[data-page="providers"]');
    const low = panel.locator('article[data-provider="claude"] [data-level="low"]');
    await low.locator("input").waitFor({ timeout: 10_000 });
    await low.locator("input").fill('["--effort","low","--add-dir=/"]');
    await low.locator('button[data-action="save-profile"]').click();
    const problem = low.locator('[data-role="profile-error"]');
    await problem.filter({ hasText: "EFFORT_PROFILE_INVALID" }).waitFor({ timeout: 10_000 });
    await expect(problem.textContent()).resolves.toContain("flag --add-dir is managed by Pedelec");
    await low.locator("input").fill('["--effort","max"]');
    await low.locator('button[data-action="save-profile"]').click();
    await panel.locator('article[data-provider="claude"] [data-level="low"]', { hasText: "yours" }).waitFor({ timeout: 10_000 });
    expect(await panel.locator('article[data-provider="claude"] [data-level="low"] input').inputValue()).toBe('["--effort","max"]');

    // The Ollama key: typed into the password field, posted once, then shown only as set.
    const keyForm = panel.locator('[data-role="ollama-api-key-form"]');
    await keyForm.locator('[data-role="ollama-api-key-state"]', { hasText: "not set" }).waitFor({ timeout: 10_000 });
    await keyForm.locator('input[name="ollamaApiKey"]').fill("sk-e2e-panel-key");
    await keyForm.locator('button[data-action="save-ollama-api-key"]').click();
    await panel.locator('[data-role="ollama-api-key-state"]', { hasText: /^set$/ }).waitFor({ timeout: 10_000 });
    expect(await panel.locator('input[name="ollamaApiKey"]').inputValue()).toBe("");
    expect(await panel.content()).not.toContain("sk-e2e-panel-key");

    // The next session at that level runs the agent with the new profile; the stand-in reports its argv.
    await page.evaluate(() => ((window as any).log = []));
    const created = await page.evaluate(async () => {
      await (window as any).create({ effortLevel: "low" });
      return (window as any).send("report-args");
    });
    expect(created).toEqual({ ok: true });
    const argv = JSON.parse((await logOf(page)).filter((entry) => entry.kind === "chat").at(-1)?.text as string) as string[];
    expect(argv.slice(-2)).toEqual(["--effort", "max"]);

    // Origins: the page's origin with its two live sessions.
    await panel.click('nav a[data-page="origins"]');
    await panel.locator(`tr[data-origin="${origin}"]`, { hasText: "2" }).waitFor({ timeout: 10_000 });

    // A used sign-in link is refused, and closes the session it opened: a reload needs a fresh `pedelec open`.
    const reused = await environment.context.newPage();
    await reused.goto(signInLink);
    await expect(reused.textContent("body")).resolves.toContain("already used");
    await reused.close();

    // Chromium shows a bodiless 404 as a failed navigation, so the panel's page asks for itself instead.
    expect(await panel.evaluate(async () => (await fetch(location.href, { credentials: "same-origin" })).status)).toBe(404);

    // Strangers: no secret, a wrong secret, a foreign Host, and a web page reading across origins all get nothing.
    const port = Number(panelUrl.port);
    expect(await rawRequest(port, "/api/sessions", `127.0.0.1:${port}`)).toEqual({ status: 404, body: "" });
    expect(await rawRequest(port, `/${"A".repeat(43)}/api/sessions`, `127.0.0.1:${port}`)).toEqual({ status: 404, body: "" });
    expect(await rawRequest(port, `${panelUrl.pathname}api/sessions`, `attacker.example:${port}`)).toEqual({ status: 421, body: "" });
    const crossOrigin = await page.evaluate(async (address) => {
      try {
        await (await fetch(address)).text();
        return "read";
      } catch (error) {
        return (error as Error).name;
      }
    }, `${url}api/sessions`);
    expect(crossOrigin).toBe("TypeError");
    expect(await rawRequest(port, "/panel/api/sessions", `127.0.0.1:${port}`)).toEqual({ status: 404, body: "" });
  });
});
