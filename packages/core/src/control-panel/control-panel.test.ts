import type { IncomingHttpHeaders } from "node:http";
import { connect } from "node:net";
import { mkdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CoreConnection } from "@pedelec/core-client/core-client";
import { startCore, type RunningCore, type StartCoreOptions } from "../core-daemon.js";
import { createCoreHome } from "../testing/core-home.js";
import { sendToPanel as send } from "../testing/panel-http.js";
import { collectSessionEvents } from "../testing/session-events.js";
import type { PanelLogsAnswer, PanelOriginsAnswer, PanelProvidersAnswer, PanelSession } from "./control-panel-wire.js";

const standInDir = resolve(fileURLToPath(new URL("../../../../test/stand-ins/claude", import.meta.url)));
const ORIGIN = "http://127.0.0.1:4100";

let home: string;
let env: NodeJS.ProcessEnv;
let core: RunningCore | undefined;
let connection: CoreConnection | undefined;

beforeEach(async () => {
  ({ home, env } = await createCoreHome({ prefix: "pedelec-panel-", providerPath: standInDir, stateFolders: { CLAUDE_CONFIG_DIR: "claude-state" } }));
});
afterEach(async () => {
  connection?.close();
  connection = undefined;
  await core?.stop();
  core = undefined;
  await rm(home, { recursive: true, force: true });
});

interface Panel {
  url: URL;
  port: number;
  secret: string;
}

async function startPanel(options: StartCoreOptions = {}): Promise<Panel> {
  core = await startCore(env, options);
  const url = new URL((await core.controlPanelUrl())!);
  return { url, port: Number(url.port), secret: url.pathname.split("/")[1]! };
}

const api = (panel: Panel, path: string) => `/${panel.secret}/api/${path}`;

async function openPage(): Promise<{ connection: CoreConnection; sessionId: string; events: ReturnType<typeof collectSessionEvents> }> {
  connection = await CoreConnection.open(core!.paths.socketPath);
  const events = collectSessionEvents(connection);
  const info = await connection.request("createSession", { provider: "claude", effortLevel: "low" }, ORIGIN);
  return { connection, sessionId: info.sessionId, events };
}

function expectSecurityHeaders(headers: IncomingHttpHeaders): void {
  expect(headers["content-security-policy"]).toContain("default-src 'none'");
  expect(headers["content-security-policy"]).toContain("frame-ancestors 'none'");
  expect(headers["referrer-policy"]).toBe("no-referrer");
  expect(headers["x-frame-options"]).toBe("DENY");
  expect(headers["cache-control"]).toBe("no-store");
  expect(Object.keys(headers).filter((name) => name.startsWith("access-control-"))).toEqual([]);
}

/** Reads a raw event stream from a socket it controls, so a test can stop reading and make the server lag. */
function rawEventStream(panel: Panel) {
  const socket = connect(panel.port, "127.0.0.1");
  socket.write(`GET ${api(panel, "events")} HTTP/1.1\r\nHost: 127.0.0.1:${panel.port}\r\nAccept: text/event-stream\r\n\r\n`);
  let text = "";
  const waiters: { test: () => boolean; resolve: () => void }[] = [];
  const onData = (chunk: Buffer): void => {
    text += chunk.toString("utf8");
    for (const waiter of [...waiters]) {
      if (!waiter.test()) continue;
      waiters.splice(waiters.indexOf(waiter), 1);
      waiter.resolve();
    }
  };
  return {
    socket,
    get text() {
      return text;
    },
    read(): void {
      socket.on("data", onData);
    },
    stopReading(): void {
      socket.off("data", onData);
      socket.pause();
    },
    until(test: (text: string) => boolean, timeoutMs = 15_000): Promise<void> {
      if (test(text)) return Promise.resolve();
      return new Promise((resolvePromise, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`the stream did not show it within ${timeoutMs} ms; got ${text.length} characters`)),
          timeoutMs,
        );
        waiters.push({
          test: () => test(text),
          resolve: () => {
            clearTimeout(timer);
            resolvePromise();
          },
        });
      });
    },
  };
}

describe("the control panel's door", () => {
  it("writes its address with a fresh 256-bit secret to a 0600 file, and removes it when Core stops", async () => {
    const panel = await startPanel();
    expect(panel.secret).toMatch(/^[A-Za-z0-9_-]{43,}$/);
    expect(panel.url.hostname).toBe("127.0.0.1");
    const file = join(home, "run", "control-panel.url");
    expect((await readFile(file, "utf8")).trim()).toBe(panel.url.href);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    await core!.stop();
    await expect(stat(file)).rejects.toMatchObject({ code: "ENOENT" });
  });

  it("serves the page with a strict policy and no CORS, and nothing without the exact secret", async () => {
    const panel = await startPanel();
    const page = await send(panel.port, `/${panel.secret}/`, { headers: { origin: "https://evil.example" } });
    expect(page.status).toBe(200);
    expect(page.headers["content-type"]).toMatch(/^text\/html/);
    expect(page.body).toContain('<script type="module" src="app.js"></script>');
    expectSecurityHeaders(page.headers);

    const wrongSecret = `${panel.secret.slice(0, -1)}${panel.secret.endsWith("A") ? "B" : "A"}`;
    for (const path of ["/", "/api/sessions", `/${wrongSecret}/`, `/${wrongSecret}/api/sessions`, `/${panel.secret.slice(0, 20)}/api/sessions`]) {
      const refused = await send(panel.port, path);
      expect(refused.status, path).toBe(404);
      expect(refused.body, path).toBe("");
      expectSecurityHeaders(refused.headers);
    }
    // A preflight from another site gets no CORS answer either.
    const preflight = await send(panel.port, api(panel, "settings"), {
      method: "OPTIONS",
      headers: { origin: "https://evil.example", "access-control-request-method": "PUT" },
    });
    expect(preflight.status).toBeGreaterThanOrEqual(400);
    expect(preflight.body).toBe("");
    expectSecurityHeaders(preflight.headers);
    // The folder form of the address, so relative links in the page stay under the secret.
    const bare = await send(panel.port, `/${panel.secret}`);
    expect(bare.status).toBe(308);
    expect(bare.headers.location).toBe(`/${panel.secret}/`);
  });

  it("answers only its own loopback Host names", async () => {
    const panel = await startPanel();
    for (const host of ["evil.example", `evil.example:${panel.port}`, `127.0.0.1:${panel.port + 1}`, `localhost`, `[::1]:${panel.port}`]) {
      const refused = await send(panel.port, api(panel, "sessions"), { host });
      expect(refused.status, host).toBe(421);
      expect(refused.body, host).toBe("");
      expectSecurityHeaders(refused.headers);
    }
    expect((await send(panel.port, api(panel, "sessions"), { host: `localhost:${panel.port}` })).status).toBe(200);
  });

  it("refuses changes sent from another origin", async () => {
    const panel = await startPanel();
    const change = { setting: "defaultEffortLevel", value: "high" };
    const foreign = await send(panel.port, api(panel, "settings"), { method: "PUT", body: change, headers: { origin: "https://evil.example" } });
    expect(foreign.status).toBe(403);
    await expect(stat(join(home, "settings.json"))).rejects.toMatchObject({ code: "ENOENT" });
    const own = await send(panel.port, api(panel, "settings"), {
      method: "PUT",
      body: change,
      headers: { origin: `http://127.0.0.1:${panel.port}` },
    });
    expect(own.status).toBe(200);
    expect(JSON.parse(await readFile(join(home, "settings.json"), "utf8"))).toMatchObject({ defaultEffortLevel: "high" });
  });
});

describe("the control panel's sessions", () => {
  it("lists live sessions with their origin and turns, and cancels and ends them as the page would", async () => {
    const panel = await startPanel();
    const { connection: page, sessionId, events } = await openPage();
    await page.request("sendText", { sessionId, turnId: "turn-1", text: "reply: one" }, ORIGIN);
    await events.until("turn-completed");
    await page.request("sendText", { sessionId, turnId: "turn-2", text: "hang" }, ORIGIN);
    await events.until("turn-started", (event) => event.turnId === "turn-2");

    const listed = JSON.parse((await send(panel.port, api(panel, "sessions"))).body) as PanelSession[];
    expect(listed).toEqual([
      expect.objectContaining({
        sessionId,
        origin: ORIGIN,
        provider: "claude",
        effortLevel: "low",
        status: "running",
        turnCount: 2,
        turnRunning: true,
        workspace: { path: join(home, "workspaces", sessionId), managed: true },
      }),
    ]);

    const cancelled = await send(panel.port, api(panel, `sessions/${sessionId}/cancel`), { method: "POST" });
    expect(JSON.parse(cancelled.body)).toEqual({ cancelled: true });
    expect(await events.until("turn-failed")).toMatchObject({ turnId: "turn-2", error: { code: "TURN_CANCELLED" } });

    const ended = await send(panel.port, api(panel, `sessions/${sessionId}/end`), { method: "POST" });
    expect(JSON.parse(ended.body)).toEqual({ ended: true });
    expect(await events.until("session-ended")).toMatchObject({ reason: "requested" });
    expect(JSON.parse((await send(panel.port, api(panel, "sessions"))).body)).toEqual([]);

    const gone = await send(panel.port, api(panel, `sessions/${sessionId}/end`), { method: "POST" });
    expect(gone.status).toBe(404);
    expect(JSON.parse(gone.body)).toMatchObject({ error: { code: "THREAD_NOT_FOUND" } });
    const invalid = await send(panel.port, api(panel, "sessions/not%20a%20session/end"), { method: "POST" });
    expect(JSON.parse(invalid.body)).toMatchObject({ error: { code: "INVALID_INPUT" } });

    const origins = JSON.parse((await send(panel.port, api(panel, "origins"))).body) as PanelOriginsAnswer;
    expect(origins.origins).toEqual([{ origin: ORIGIN, live: 0, ended: 1 }]);
    expect(origins.extensionOptionsUrl).toMatch(/^chrome-extension:\/\/[a-p]{32}\/options\.html$/);
  });
});

describe("the control panel's live events", () => {
  it("streams every session event with its origin and provider", async () => {
    const panel = await startPanel();
    const stream = rawEventStream(panel);
    stream.read();
    await stream.until((text) => text.includes("retry: 1000"));
    expect(stream.text.toLowerCase()).toContain("content-type: text/event-stream");
    expect(stream.text.toLowerCase()).not.toContain("access-control-");
    const { connection: page, sessionId } = await openPage();
    await page.request("sendText", { sessionId, turnId: "turn-1", text: "reply: streamed to the panel" }, ORIGIN);
    await stream.until((text) => text.includes('"type":"turn-completed"'));
    const events = stream.text
      .split("\n\n")
      .filter((block) => block.includes("event: session-event"))
      .map((block) => JSON.parse(block.slice(block.indexOf("data: ") + 6)));
    expect(events.map((event) => event.envelope.event.type)).toContain("chat-completed");
    expect(events.find((event) => event.envelope.event.type === "chat-completed")).toMatchObject({
      origin: ORIGIN,
      provider: "claude",
      envelope: { sessionId, event: { text: "streamed to the panel" } },
    });
    stream.socket.destroy();
  });

  it("drops events for a client that stops reading, bounded, and says how many", async () => {
    const panel = await startPanel({ controlPanel: { events: { maxBufferedBytes: 64 * 1024, maxStringLength: 1024 * 1024 } } });
    const stream = rawEventStream(panel);
    stream.read();
    await stream.until((text) => text.includes("retry: 1000"));
    stream.stopReading();
    const { connection: page, sessionId, events } = await openPage();
    // About 16 MiB of text deltas: far more than the kernel's buffers hold for a client that does not read.
    await page.request("sendText", { sessionId, turnId: "turn-1", text: "reply-large 16000000" }, ORIGIN);
    // The whole answer is too large for one chat-completed event; the turn ends either way. 16 MiB through Core takes a
    // few seconds, more on a loaded machine than the event log's usual deadline.
    const turnEnded = () => events.seen.some((event) => event.type === "turn-completed" || event.type === "turn-failed");
    await expect.poll(turnEnded, { timeout: 45_000, interval: 50 }).toBe(true);
    stream.read();
    stream.socket.resume();
    await stream.until((text) => /event: dropped\ndata: \{"count":\d+\}/.test(text), 30_000);
    const dropped = Number(/event: dropped\ndata: \{"count":(\d+)\}/.exec(stream.text)![1]);
    expect(dropped).toBeGreaterThan(0);
    // The stream goes on after the gap.
    await page.request("sendText", { sessionId, turnId: "turn-2", text: "reply: after the gap" }, ORIGIN);
    await stream.until((text) => text.includes('"text":"after the gap"'));
    stream.socket.destroy();
  }, 60_000);
});

describe("the control panel's providers and settings", () => {
  it("shows each provider's availability, version, path and profiles", async () => {
    const panel = await startPanel();
    const answer = JSON.parse((await send(panel.port, api(panel, "providers"))).body) as PanelProvidersAnswer;
    const claude = answer.providers.find((provider) => provider.code === "claude");
    expect(claude).toMatchObject({
      available: true,
      error: null,
      version: expect.stringContaining("2.1.332"),
      executablePath: join(standInDir, "claude"),
    });
    expect(claude?.effortProfiles.high).toEqual({ tokens: ["--effort", "high"], configured: false });
    expect(answer.providers.find((provider) => provider.code === "codex")).toMatchObject({ available: false, error: expect.any(String) });
    expect(answer.settings).toEqual({ defaultProvider: null, defaultEffortLevel: "medium", defaultModels: {} });
  });

  it("refuses an effort profile Core would refuse, with Core's message, and the next session uses an accepted one", async () => {
    const panel = await startPanel();
    const put = (body: unknown) => send(panel.port, api(panel, "settings"), { method: "PUT", body });
    const refused = await put({ setting: "effortProfile", provider: "claude", level: "low", tokens: ["--effort", "low", "--add-dir=/"] });
    expect(refused.status).toBe(400);
    expect(JSON.parse(refused.body)).toEqual({
      error: {
        code: "EFFORT_PROFILE_INVALID",
        message: "effort profile claude/low: flag --add-dir is managed by Pedelec and cannot be set in an effort profile",
      },
    });
    const shell = await put({ setting: "effortProfile", provider: "claude", level: "low", tokens: ["--effort", "low; rm -rf ~"] });
    expect(JSON.parse(shell.body)).toMatchObject({ error: { code: "EFFORT_PROFILE_INVALID", message: expect.stringContaining("shell syntax") } });
    const malformed = await put({ setting: "effortProfile", provider: "claude", level: "low", tokens: "--effort high" });
    expect(JSON.parse(malformed.body)).toMatchObject({ error: { code: "INVALID_INPUT" } });
    const unknown = await put({ setting: "effortProfile", provider: "nobody", level: "low", tokens: [] });
    expect(JSON.parse(unknown.body)).toMatchObject({ error: { code: "INVALID_INPUT" } });
    await expect(stat(join(home, "settings.json"))).rejects.toMatchObject({ code: "ENOENT" });

    const accepted = await put({ setting: "effortProfile", provider: "claude", level: "low", tokens: ["--effort", "max"] });
    expect(accepted.status).toBe(200);
    const after = JSON.parse(accepted.body) as PanelProvidersAnswer;
    expect(after.providers.find((provider) => provider.code === "claude")?.effortProfiles.low).toEqual({
      tokens: ["--effort", "max"],
      configured: true,
    });
    expect(JSON.parse(await readFile(join(home, "settings.json"), "utf8"))).toMatchObject({
      effortProfiles: { claude: { low: ["--effort", "max"] } },
    });

    const { connection: page, sessionId, events } = await openPage();
    await page.request("sendText", { sessionId, turnId: "turn-1", text: "report-args" }, ORIGIN);
    const reported = JSON.parse((await events.until("chat-completed")).text) as string[];
    expect(reported.slice(-2)).toEqual(["--effort", "max"]);

    // Back to the provider's default.
    await put({ setting: "effortProfile", provider: "claude", level: "low", tokens: null });
    expect(JSON.parse(await readFile(join(home, "settings.json"), "utf8")).effortProfiles).toEqual({});
    await put({ setting: "defaultModel", provider: "claude", value: "claude-opus-4-1" });
    await put({ setting: "defaultProvider", value: "claude" });
    const settings = JSON.parse((await send(panel.port, api(panel, "providers"))).body).settings;
    expect(settings).toEqual({ defaultProvider: "claude", defaultEffortLevel: "medium", defaultModels: { claude: "claude-opus-4-1" } });
  });

  it("sets the Ollama API key from the page's form, and never sends it back", async () => {
    const panel = await startPanel();
    const key = "sk-panel-0123456789-very-secret";
    const put = (body: unknown, headers: Record<string, string> = {}) => send(panel.port, api(panel, "settings"), { method: "PUT", body, headers });
    const before = JSON.parse((await send(panel.port, api(panel, "providers"))).body) as PanelProvidersAnswer;
    expect(before.secrets).toEqual([
      {
        key: "ollama.apiKey",
        provider: "ollama",
        providerName: "Ollama",
        label: "API key",
        description: expect.stringContaining("settings.json (0600)"),
        set: false,
      },
    ]);
    // Another origin's page cannot set it, nor a form post.
    expect((await put({ setting: "providerSecret", key: "ollama.apiKey", value: key }, { origin: "http://127.0.0.1:3000" })).status).toBe(403);
    await expect(stat(join(home, "settings.json"))).rejects.toMatchObject({ code: "ENOENT" });

    const saved = await put({ setting: "providerSecret", key: "ollama.apiKey", value: key }, { origin: `http://127.0.0.1:${panel.port}` });
    expect(saved.status).toBe(200);
    expect(saved.body).not.toContain(key);
    expect((JSON.parse(saved.body) as PanelProvidersAnswer).secrets[0]?.set).toBe(true);
    const settingsFile = join(home, "settings.json");
    expect(JSON.parse(await readFile(settingsFile, "utf8")).ollama.apiKey).toBe(key);
    expect((await stat(settingsFile)).mode & 0o777).toBe(0o600);
    // Nothing the panel serves shows it: not the providers, not the logs.
    for (const path of ["providers", "logs", "sessions", "origins"]) expect((await send(panel.port, api(panel, path))).body).not.toContain(key);

    const twoLines = await put({ setting: "providerSecret", key: "ollama.apiKey", value: "one\ntwo" });
    expect(JSON.parse(twoLines.body)).toEqual({ error: { code: "INVALID_INPUT", message: "ollama.apiKey must be one line" } });
    const tooLong = await put({ setting: "providerSecret", key: "ollama.apiKey", value: "k".repeat(5_000) });
    expect(tooLong.status).toBe(400);
    expect(tooLong.body).not.toContain("kkkk");
    expect(JSON.parse(await readFile(settingsFile, "utf8")).ollama.apiKey).toBe(key);

    // The secret field sets secrets only: any other key has its own field, checked by its own schema.
    for (const other of ["ollama.baseUrl", "defaultProvider", "providers.claude.path"]) {
      const refused = await put({ setting: "providerSecret", key: other, value: "http://127.0.0.1:1" });
      expect(JSON.parse(refused.body)).toEqual({ error: { code: "INVALID_INPUT", message: `${other} is not a provider's secret setting` } });
    }
    const cleared = await put({ setting: "providerSecret", key: "ollama.apiKey", value: "" });
    expect((JSON.parse(cleared.body) as PanelProvidersAnswer).secrets[0]?.set).toBe(false);
    expect(JSON.parse(await readFile(settingsFile, "utf8")).ollama.apiKey).toBe("");
  });
});

describe("the control panel's logs", () => {
  it("reads core.log and its rotated predecessors, skips what is not JSON, and filters by text and level", async () => {
    const logs = join(home, "logs");
    await mkdir(logs, { recursive: true });
    await writeFile(
      join(logs, "core.log.1"),
      [JSON.stringify({ time: 1_700_000_000_000, level: 50, msg: "an older pino error", pid: 1 }), "not json at all"].join("\n"),
    );
    // The rotated file is older than the one being written.
    const { utimes } = await import("node:fs/promises");
    await utimes(join(logs, "core.log.1"), new Date(1_700_000_000_000), new Date(1_700_000_000_000));
    await writeFile(
      join(logs, "core.log"),
      [
        JSON.stringify({ time: "2026-05-01T10:00:00.000Z", level: "info", message: "Core listening", socket: "/x" }),
        "Error: a stack trace line",
        JSON.stringify({ time: "2026-05-01T10:00:01.000Z", level: "warn", message: "settings.json is not usable", problem: "bad" }),
        "{ half a line",
      ].join("\n"),
    );
    const panel = await startPanel();
    const all = JSON.parse((await send(panel.port, api(panel, "logs"))).body) as PanelLogsAnswer;
    const ours = all.lines.filter((line) => line.time?.startsWith("2026") || line.file === "core.log.1");
    expect(ours.map((line) => [line.file, line.level, line.message])).toEqual([
      ["core.log", "warn", "settings.json is not usable"],
      ["core.log", "info", "Core listening"],
      ["core.log.1", "error", "an older pino error"],
    ]);
    expect(ours[0]!.fields).toEqual({ problem: "bad" });
    const warnings = JSON.parse((await send(panel.port, api(panel, "logs?level=warn"))).body) as PanelLogsAnswer;
    expect(warnings.lines.map((line) => line.message)).toEqual(["settings.json is not usable", "an older pino error"]);
    const found = JSON.parse((await send(panel.port, api(panel, "logs?text=SOCKET"))).body) as PanelLogsAnswer;
    expect(found.lines.map((line) => line.message)).toEqual(["Core listening"]);
    const invalid = await send(panel.port, api(panel, "logs?level=loud"));
    expect(invalid.status).toBe(400);
    expect(JSON.parse(invalid.body)).toMatchObject({ error: { code: "INVALID_INPUT" } });
  });
});
