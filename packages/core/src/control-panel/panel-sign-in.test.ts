import { rm } from "node:fs/promises";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startCore, type RunningCore } from "../core-daemon.js";
import { setLogSink } from "../logger.js";
import type { LogSink } from "../logging/log-record.js";
import { createCoreHome } from "../testing/core-home.js";
import { sendToPanel as send } from "../testing/panel-http.js";
import { PanelSignIn } from "./panel-sign-in.js";

const standInDir = resolve(fileURLToPath(new URL("../../../../test/stand-ins/claude", import.meta.url)));

describe("PanelSignIn", () => {
  it("turns a code into a browser session once, and a second use closes that session", () => {
    const signIn = new PanelSignIn();
    const { code } = signIn.issueCode();
    expect(code).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const first = signIn.redeem(code);
    if (!first.ok) throw new Error("the first use was refused");
    expect(signIn.sessionOpen(first.token)).toBe(true);
    expect(signIn.redeem(code)).toEqual({ ok: false, reason: "replayed" });
    // Whoever was first (the browser or someone who read the opener's argv), the session is closed now.
    expect(signIn.sessionOpen(first.token)).toBe(false);
    expect(signIn.redeem(code)).toEqual({ ok: false, reason: "unknown" });
  });

  it("lets a code expire, and a browser session too", () => {
    let now = 1_000_000;
    const signIn = new PanelSignIn({ codeTtlMs: 60_000, browserSessionTtlMs: 3_600_000, now: () => now });
    const late = signIn.issueCode();
    expect(late.expiresAt).toBe(new Date(1_060_000).toISOString());
    const timely = signIn.issueCode();
    now += 59_999;
    const opened = signIn.redeem(timely.code);
    if (!opened.ok) throw new Error("a code within its minute was refused");
    now += 1;
    expect(signIn.redeem(late.code).ok).toBe(false);
    expect(signIn.sessionOpen(opened.token)).toBe(true);
    now += 3_600_000;
    expect(signIn.sessionOpen(opened.token)).toBe(false);
  });

  it("knows no code it did not issue, and no token it did not give", () => {
    const signIn = new PanelSignIn();
    expect(signIn.redeem("A".repeat(43))).toEqual({ ok: false, reason: "unknown" });
    expect(signIn.sessionOpen(undefined)).toBe(false);
    expect(signIn.sessionOpen("")).toBe(false);
    expect(signIn.sessionOpen("A".repeat(43))).toBe(false);
  });
});

describe("signing a browser in to the control panel", () => {
  let home: string;
  let env: NodeJS.ProcessEnv;
  let core: RunningCore | undefined;
  /** Every line Core logs, as written, with its fields. */
  let logged: string[];
  let previousSink: LogSink;

  beforeEach(async () => {
    ({ home, env } = await createCoreHome({
      prefix: "pedelec-sign-in-",
      providerPath: standInDir,
      stateFolders: { CLAUDE_CONFIG_DIR: "claude-state" },
    }));
    logged = [];
    previousSink = setLogSink({ write: (record) => void logged.push(JSON.stringify(record)) });
  });
  afterEach(async () => {
    await core?.stop();
    core = undefined;
    setLogSink(previousSink);
    await rm(home, { recursive: true, force: true });
  });

  async function start(codeTtlMs?: number) {
    core = await startCore(env, codeTtlMs === undefined ? {} : { controlPanel: { signIn: { codeTtlMs } } });
    const url = new URL((await core.controlPanelUrl())!);
    const secret = url.pathname.split("/")[1]!;
    const port = Number(url.port);
    const issue = async (): Promise<{ url: string; expiresAt: string }> => {
      const answer = await send(port, `/${secret}/api/sign-in-codes`, { method: "POST", body: {} });
      expect(answer.status).toBe(200);
      return JSON.parse(answer.body) as { url: string; expiresAt: string };
    };
    return { port, secret, issue, cookieName: `pedelec-panel-${port}` };
  }

  it("swaps a one-time code for an HttpOnly cookie and sends the browser to a clean address", async () => {
    const panel = await start();
    const link = await panel.issue();
    expect(link.url).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${panel.port}/sign-in/[A-Za-z0-9_-]{43}$`));
    expect(link.url).not.toContain(panel.secret);
    expect(Date.parse(link.expiresAt) - Date.now()).toBeLessThanOrEqual(60_000);

    const path = new URL(link.url).pathname;
    const signedIn = await send(panel.port, path);
    expect(signedIn.status).toBe(303);
    expect(signedIn.headers.location).toBe("/panel/");
    const cookie = String(signedIn.headers["set-cookie"]);
    expect(cookie).toMatch(new RegExp(`^${panel.cookieName}=[A-Za-z0-9_-]{43}; Path=/panel/; Max-Age=\\d+; HttpOnly; SameSite=Strict$`));
    expect(cookie).not.toContain(panel.secret);
    const sent = cookie.split(";")[0]!;

    const page = await send(panel.port, "/panel/", { headers: { cookie: sent, "sec-fetch-site": "none" } });
    expect(page.status).toBe(200);
    expect(page.body).toContain("Pedelec control panel");
    expect(page.body).not.toContain(panel.secret);
    const sessions = await send(panel.port, "/panel/api/sessions", { headers: { cookie: sent, "sec-fetch-site": "same-origin" } });
    expect(sessions.status).toBe(200);
    expect(JSON.parse(sessions.body)).toEqual([]);
    // The cookie's door hands out no codes: only who holds the secret does.
    const codes = await send(panel.port, "/panel/api/sign-in-codes", {
      method: "POST",
      body: {},
      headers: { cookie: sent, origin: `http://127.0.0.1:${panel.port}` },
    });
    expect(codes.status).toBe(404);

    // Nothing secret reached the log: not the secret, not the code, not the cookie.
    await core!.stop();
    core = undefined;
    const log = logged.join("\n");
    expect(log).toContain("control panel sign-in code issued");
    expect(log).toContain("a browser signed in with a one-time code");
    for (const secret of [panel.secret, path.split("/")[2]!, sent.split("=")[1]!]) expect(log).not.toContain(secret);
  });

  it("takes a code once: a second use is refused and closes the session the first opened", async () => {
    const panel = await start();
    const path = new URL((await panel.issue()).url).pathname;
    const first = await send(panel.port, path);
    expect(first.status).toBe(303);
    const sent = String(first.headers["set-cookie"]).split(";")[0]!;
    expect((await send(panel.port, "/panel/api/sessions", { headers: { cookie: sent } })).status).toBe(200);

    const second = await send(panel.port, path);
    expect(second.status).toBe(403);
    expect(second.headers["set-cookie"]).toBeUndefined();
    expect(second.body).toContain("already used");
    expect(second.body).toContain("pedelec open");
    expect((await send(panel.port, "/panel/api/sessions", { headers: { cookie: sent } })).status).toBe(404);
    expect((await send(panel.port, path)).status).toBe(403);
  });

  it("lets a code expire unused", async () => {
    const panel = await start(100);
    const path = new URL((await panel.issue()).url).pathname;
    await new Promise((resolvePromise) => setTimeout(resolvePromise, 150));
    const late = await send(panel.port, path);
    expect(late.status).toBe(403);
    expect(late.headers["set-cookie"]).toBeUndefined();
    expect(late.body).toContain("expired");
  });

  it("keeps the Host, origin and CSRF checks behind the cookie", async () => {
    const panel = await start();
    // A rebinding page's Host gets nothing, not even a redeemed code.
    const path = new URL((await panel.issue()).url).pathname;
    expect((await send(panel.port, path, { host: `evil.example:${panel.port}` })).status).toBe(421);
    const signedIn = await send(panel.port, path);
    expect(signedIn.status).toBe(303);
    const sent = String(signedIn.headers["set-cookie"]).split(";")[0]!;
    const own = `http://127.0.0.1:${panel.port}`;

    expect((await send(panel.port, "/panel/api/sessions", { host: `evil.example:${panel.port}`, headers: { cookie: sent } })).status).toBe(421);
    // No cookie, a wrong one, or the cookie of another port's panel: the bare 404 a wrong secret gets.
    expect((await send(panel.port, "/panel/api/sessions")).status).toBe(404);
    expect((await send(panel.port, "/panel/api/sessions", { headers: { cookie: `${panel.cookieName}=${"A".repeat(43)}` } })).status).toBe(404);
    expect((await send(panel.port, "/panel/api/sessions", { headers: { cookie: `pedelec-panel-1=${sent.split("=")[1]}` } })).status).toBe(404);
    // A page on another port of 127.0.0.1 is same-site, so the browser sends the cookie; it is refused all the same.
    const crossPort = await send(panel.port, "/panel/api/sessions", {
      headers: { cookie: sent, "sec-fetch-site": "same-site", origin: "http://127.0.0.1:3000" },
    });
    expect(crossPort.status).toBe(404);
    expect((await send(panel.port, "/panel/", { headers: { cookie: sent, "sec-fetch-site": "cross-site" } })).status).toBe(404);
    // Changes still need the panel's own Origin and a JSON body, as under the secret.
    const change = { setting: "defaultEffortLevel", value: "high" };
    expect(
      (await send(panel.port, "/panel/api/settings", { method: "PUT", body: change, headers: { cookie: sent, origin: "http://127.0.0.1:3000" } }))
        .status,
    ).toBe(403);
    const formPost = await send(panel.port, "/panel/api/settings", {
      method: "PUT",
      headers: { cookie: sent, origin: own, "content-type": "application/x-www-form-urlencoded" },
    });
    expect(formPost.status).toBe(400);
    expect(
      (
        await send(panel.port, "/panel/api/settings", {
          method: "PUT",
          body: change,
          headers: { cookie: sent, origin: own, "sec-fetch-site": "same-origin" },
        })
      ).status,
    ).toBe(200);
    // Codes are given only for a POST under the secret, with the same write checks.
    expect((await send(panel.port, `/${panel.secret}/api/sign-in-codes`)).status).toBe(405);
    expect(
      (await send(panel.port, `/${panel.secret}/api/sign-in-codes`, { method: "POST", body: {}, headers: { origin: "http://127.0.0.1:3000" } }))
        .status,
    ).toBe(403);
    expect((await send(panel.port, "/sign-in/x", { method: "POST" })).status).toBe(405);
  });
});
