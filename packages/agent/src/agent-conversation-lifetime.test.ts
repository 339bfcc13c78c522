import { mkdir, mkdtemp, readdir, readFile, rm, stat, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { CoreConnection } from "@pedelec/core-client/core-client";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import type { SessionEventEnvelope } from "@pedelec/protocol/session-events";
import { resolveCorePaths } from "@pedelec/core/core-paths";
import { ProcessGroupLedger } from "@pedelec/core/process-group-ledger";
import { createProviderRegistry } from "@pedelec/core/providers/provider-registry";
import { SessionManager } from "@pedelec/core/session-manager";
import { SessionStore } from "@pedelec/core/session-store/session-store";
import { loadSettings } from "@pedelec/core/settings";
import { useCoreUnderTest } from "@pedelec/core/testing/core-home";
import { collectSessionEvents } from "@pedelec/core/testing/session-events";
import { startOllamaServer, type RunningOllamaServer } from "../../../test/stand-ins/ollama/ollama-server.mjs";
import { MAX_CONVERSATION_BYTES } from "./conversation-trim.js";
import { buildAgentForTests } from "./testing/agent-process.js";

/**
 * What pedelec-agent keeps of an ollama session (PEDELEC_HOME/agent/conversations/<id>.json) goes with the session: when
 * Core ends it, when the retention sweep ends it, and, for files no open session names, in the sweep itself.
 */

const repoRoot = resolve(fileURLToPath(new URL("../../../", import.meta.url)));
const TS_RUNTIME_ENTRY = join(repoRoot, "packages/cli/dist/agent-commands/pedelec-ts-runtime.mjs");
const ORIGIN = "http://127.0.0.1:4000";
const API_KEY = "test-key-lifetime-2b9c";
const HOUR_MS = 60 * 60_000;
const DAY_MS = 24 * HOUR_MS;

let entry: string;
let server: RunningOllamaServer | undefined;

beforeAll(async () => {
  entry = await buildAgentForTests();
});
afterEach(async () => {
  await server?.close();
  server = undefined;
});
afterAll(async () => {
  await rm(join(entry, ".."), { recursive: true, force: true });
});

const core = useCoreUnderTest(() => ({
  prefix: "pedelec-agent-lifetime-",
  providerPath: "/nonexistent",
  launchers: { "pedelec-agent": entry, "pedelec-ts-runtime": TS_RUNTIME_ENTRY },
}));

async function conversationFiles(home: string): Promise<string[]> {
  return (await readdir(join(home, "agent", "conversations")).catch(() => [] as string[])).sort();
}

/** Writes a conversation file as the agent would leave it, last written at `modifiedAt` (ms). */
async function plantConversation(home: string, conversationId: string, modifiedAt: number): Promise<void> {
  const folder = join(home, "agent", "conversations");
  await mkdir(folder, { recursive: true, mode: 0o700 });
  const file = join(folder, `${conversationId}.json`);
  await writeFile(file, JSON.stringify({ version: 1, conversationId, messages: [] }), { mode: 0o600 });
  await utimes(file, modifiedAt / 1000, modifiedAt / 1000);
}

describe("an ollama session's stored conversation, through a real Core", () => {
  it("is removed when the session ends", async () => {
    server = await startOllamaServer({ apiKey: API_KEY });
    await writeFile(join(core.home, "settings.json"), JSON.stringify({ ollama: { baseUrl: server.url, apiKey: API_KEY } }), { mode: 0o600 });
    const running = await core.start();
    const page = await CoreConnection.open(running.paths.socketPath);
    const events = collectSessionEvents(page, 30_000);
    const { sessionId } = await page.request("createSession", { provider: "ollama", model: "qwen3" }, ORIGIN);
    // A turn that writes large files leaves a large conversation behind: the calls' arguments are part of it.
    const write = JSON.stringify({ path: "big-{n}.txt", content: "a".repeat(900 * 1024) });
    await page.request("sendText", { sessionId, turnId: "turn-1", text: `many-calls 16 workspace_write_file ${write}` }, ORIGIN);
    await events.until("turn-completed");
    const [file] = await conversationFiles(core.home);
    expect(file).toMatch(/\.json$/);
    const size = (await stat(join(core.home, "agent", "conversations", file!))).size;
    console.log(`conversation of the live session after 16 writes of 900 KiB: ${size} bytes (cap ${MAX_CONVERSATION_BYTES})`);
    expect(size).toBeLessThanOrEqual(MAX_CONVERSATION_BYTES);
    const stored = JSON.parse(await readFile(join(core.home, "agent", "conversations", file!), "utf8"));
    expect(JSON.stringify(stored.messages)).toContain("Pedelec removed this argument");

    await page.request("endSession", { sessionId }, ORIGIN);
    await events.until("session-ended");
    await expect.poll(() => conversationFiles(core.home), { timeout: 5_000 }).toEqual([]);
    console.log(`after endSession: ${(await conversationFiles(core.home)).length} conversation files`);
    page.close();
  }, 60_000);

  it("at start, sweeps conversations no open session names, keeping the open sessions' and just-written ones", async () => {
    server = await startOllamaServer({ apiKey: API_KEY });
    await writeFile(join(core.home, "settings.json"), JSON.stringify({ ollama: { baseUrl: server.url, apiKey: API_KEY } }), { mode: 0o600 });
    let running = await core.start();
    let page = await CoreConnection.open(running.paths.socketPath);
    const events = collectSessionEvents(page, 30_000);
    const { sessionId } = await page.request("createSession", { provider: "ollama", model: "qwen3" }, ORIGIN);
    await page.request("sendText", { sessionId, turnId: "turn-1", text: "reply: hello" }, ORIGIN);
    await events.until("turn-completed");
    const [owned] = await conversationFiles(core.home);
    page.close();
    await running.stop();

    // Left behind by sessions that ended before Core removed their files (as every Core before this one did).
    const twoHoursAgo = Date.now() - 2 * HOUR_MS;
    await plantConversation(core.home, "orphan-old-0001", twoHoursAgo);
    await plantConversation(core.home, "orphan-fresh-0002", Date.now());
    const ownedFile = join(core.home, "agent", "conversations", owned!);
    await utimes(ownedFile, twoHoursAgo / 1000, twoHoursAgo / 1000);

    running = await core.start();
    await running.whenReady();
    expect(await conversationFiles(core.home)).toEqual([owned, "orphan-fresh-0002.json"].sort());
    // The open session still continues its conversation.
    page = await CoreConnection.open(running.paths.socketPath);
    const again = collectSessionEvents(page, 30_000);
    await page.request("resumeSession", { sessionId }, ORIGIN);
    await page.request("sendText", { sessionId, turnId: "turn-2", text: "reply: again" }, ORIGIN);
    await again.until("turn-completed");
    const chats = server.requests.filter((request) => request.path === "/api/chat");
    expect(chats.at(-1)?.body.messages.map((message: { role: string }) => message.role)).toEqual(["system", "user", "assistant", "user"]);
    page.close();
  }, 60_000);
});

describe("the retention sweep (SessionManager, on a clock of its own)", () => {
  it("removes the conversation of a session it ends, and of a stored one that expired while Core was down", async () => {
    const root = await mkdtemp(join(tmpdir(), "pedelec-agent-retention-"));
    const ollama = await startOllamaServer({ apiKey: API_KEY });
    server = ollama;
    const home = join(root, "home");
    const env = { ...process.env, PEDELEC_HOME: home, PEDELEC_PROVIDER_PATH: "/nonexistent" };
    const paths = resolveCorePaths(env);
    await mkdir(paths.binDir, { recursive: true });
    await writeFile(join(paths.binDir, "pedelec-agent"), `#!/bin/sh\nexec '${process.execPath}' '${entry}' "$@"\n`, { mode: 0o755 });
    await writeFile(paths.settingsFile, JSON.stringify({ ollama: { baseUrl: ollama.url, apiKey: API_KEY } }), { mode: 0o600 });
    let now = Date.now();
    const published: SessionEventEnvelope[] = [];
    const manager = (store: SessionStore) =>
      new SessionManager({
        paths,
        loadSettings: () => loadSettings(paths.settingsFile),
        providers: createProviderRegistry(),
        env,
        processLedger: new ProcessGroupLedger(join(paths.runDir, "provider-processes")),
        scriptRunner: () => Promise.reject(new PedelecError("DENO_UNAVAILABLE", "these sessions run no scripts")),
        publish: (envelope) => published.push(envelope),
        store,
        now: () => now,
      });
    try {
      const sessions = manager(SessionStore.open(paths.sessionStoreFile));
      const stale = await sessions.create(ORIGIN, { provider: "ollama", model: "qwen3" });
      const recent = await sessions.create(ORIGIN, { provider: "ollama", model: "qwen3" });
      // No agent turn runs here (no Core socket for its page tools): the store names each session's conversation as a
      // finished turn would have left it.
      const store = SessionStore.open(paths.sessionStoreFile);
      store.updateSession(stale.sessionId, { providerSessionId: "conversation-stale-01" });
      store.updateSession(recent.sessionId, { providerSessionId: "conversation-recent-02" });
      store.close();
      await plantConversation(home, "conversation-stale-01", now - 2 * HOUR_MS);
      await plantConversation(home, "conversation-recent-02", now - 2 * HOUR_MS);
      // The stale session is used no more; the recent one is, six days later.
      now += 6 * DAY_MS;
      sessions.eventsAfter(recent.sessionId, 0);
      now += 1.5 * DAY_MS;
      expect(await sessions.sweepExpired()).toBe(1);
      expect(await conversationFiles(home)).toEqual(["conversation-recent-02.json"]);
      await sessions.shutdown();

      // Core is down past the recent session's retention; the next Core ends it at restore and removes its file.
      now += 8 * DAY_MS;
      const next = manager(SessionStore.open(paths.sessionStoreFile));
      expect(await next.restore()).toMatchObject({ expired: 1 });
      await next.workspacesRemoved();
      expect(await conversationFiles(home)).toEqual([]);
      await next.shutdown();
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});
