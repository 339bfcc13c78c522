import { mkdir, mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { collectGarbage } from "@pedelec/protocol/testing/heap-growth";
import type { SessionEventEnvelope } from "@pedelec/protocol/session-events";
import { resolveCorePaths } from "./core-paths.js";
import { ProcessGroupLedger } from "./process-group-ledger.js";
import { createProviderRegistry } from "./providers/provider-registry.js";
import type { Session } from "./session.js";
import { SessionStore } from "./session-store/session-store.js";
import { SessionManager, type SessionManagerOptions } from "./session-manager.js";
import { loadSettings } from "./settings.js";

const standInDir = resolve(fileURLToPath(new URL("../../../test/stand-ins/claude", import.meta.url)));
const ORIGIN = "http://127.0.0.1:4000";
const TOOLS = Array.from({ length: 10 }, (_, index) => ({
  name: `tool_${index}`,
  description: `Tool ${index}`,
  argsSchema: { type: "object" as const, properties: { title: { type: "string" as const, maxLength: 100 + index } }, required: ["title"] },
}));

let root: string;
let published: SessionEventEnvelope[];

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "pedelec-session-manager-"));
  published = [];
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

function manager(overrides: Partial<SessionManagerOptions> = {}): SessionManager {
  const env = { ...process.env, PEDELEC_HOME: join(root, "home"), PEDELEC_PROVIDER_PATH: standInDir, CLAUDE_CONFIG_DIR: join(root, "claude") };
  const paths = resolveCorePaths(env);
  return new SessionManager({
    paths,
    loadSettings: () => loadSettings(paths.settingsFile),
    providers: createProviderRegistry(),
    env,
    processLedger: new ProcessGroupLedger(join(paths.runDir, "provider-processes")),
    scriptRunner: () => Promise.reject(new PedelecError("DENO_UNAVAILABLE", "these sessions run no scripts")),
    publish: (envelope) => published.push(envelope),
    store: SessionStore.open(paths.sessionStoreFile),
    ...overrides,
  });
}

describe("SessionManager releases ended sessions", () => {
  it("keeps only tombstones of 100 ended sessions and removes their managed workspaces", async () => {
    const sessions = manager();
    const workspacesDir = join(root, "home", "workspaces");
    collectGarbage();
    const before = process.memoryUsage();
    const released: WeakRef<Session>[] = [];
    const ids: string[] = [];
    // In a function of its own, so no variable of this test keeps the last session.
    const createAndEnd = async (): Promise<void> => {
      const info = await sessions.create(ORIGIN, { provider: "claude", skills: { guidance: "", tools: TOOLS } });
      ids.push(info.sessionId);
      const session = sessions.getForOrigin(info.sessionId, ORIGIN) as Session;
      released.push(new WeakRef(session));
      expect(await session.end("requested")).toBe(true);
    };
    for (let index = 0; index < 100; index += 1) await createAndEnd();
    await sessions.workspacesRemoved();
    expect(await readdir(workspacesDir)).toEqual([]);
    expect(sessions.counts).toEqual({ live: 0, ended: 100 });
    expect(published.filter((envelope) => envelope.event.type === "session-ended")).toHaveLength(100);

    const ended = sessions.getForOrigin(ids[0]!, ORIGIN);
    expect(ended.info()).toMatchObject({ sessionId: ids[0], status: "ended", provider: "claude", toolNames: TOOLS.map((entry) => entry.name) });
    expect(ended.info().lastSeq).toBe(published.filter((envelope) => envelope.sessionId === ids[0]).at(-1)?.seq);
    await expect(ended.end("requested")).resolves.toBe(false);
    expect(() => ended.startTurn("t1", "hello")).toThrowError(expect.objectContaining({ code: "SESSION_ENDED" }) as Error);
    await expect(ended.scripts.run({ runId: "r", caller: "page", access: "sandbox", spec: { entry: "x.ts" } as never })).rejects.toMatchObject({
      code: "SESSION_ENDED",
    });
    expect(() => sessions.getForOrigin(ids[0]!, "http://other.test")).toThrowError(expect.objectContaining({ code: "THREAD_NOT_FOUND" }) as Error);

    // Nothing but the tombstones holds the sessions: their tools, adapters and closures can go.
    await new Promise((resolvePromise) => setImmediate(resolvePromise));
    collectGarbage();
    const after = process.memoryUsage();
    const stillHeld = released.filter((reference) => reference.deref() !== undefined).length;
    console.log(
      `100 sessions created and ended: RSS ${((after.rss - before.rss) / 1048576).toFixed(1)} MiB, ` +
        `heap ${((after.heapUsed - before.heapUsed) / 1048576).toFixed(1)} MiB, sessions still held ${stillHeld}`,
    );
    expect(stillHeld).toBe(0);
    expect(after.heapUsed - before.heapUsed).toBeLessThan(8 * 1024 * 1024);
  });

  it("tells the agent of an ended session that it ended, and anyone else nothing", async () => {
    const sessions = manager();
    const info = await sessions.create(ORIGIN, { provider: "claude" });
    const session = sessions.getForOrigin(info.sessionId, ORIGIN) as Session;
    const secret = session.setup.capability.secret;
    await session.end("requested");
    expect(() => sessions.getForAgent(info.sessionId, secret)).toThrowError(expect.objectContaining({ code: "SESSION_ENDED" }) as Error);
    expect(() => sessions.getForAgent(info.sessionId, "not-the-secret")).toThrowError(
      expect.objectContaining({ code: "THREAD_ACCESS_DENIED" }) as Error,
    );
  });

  it("never removes an explicit workspace", async () => {
    const sessions = manager();
    const explicit = join(root, "project");
    await mkdir(explicit);
    const info = await sessions.create(ORIGIN, { provider: "claude", workspace: { path: explicit } });
    await sessions.getForOrigin(info.sessionId, ORIGIN).end("requested");
    await sessions.workspacesRemoved();
    expect(await readdir(explicit)).toEqual([".pedelec-runtime"]);
    expect(sessions.getForOrigin(info.sessionId, ORIGIN).info()).toMatchObject({ status: "ended", workspace: { managed: false } });
  });

  it("forgets the oldest ended sessions beyond the count, and any past the age limit", async () => {
    let now = 1_000_000;
    const sessions = manager({ endedSessionLimits: { maxCount: 3, maxAgeMs: 60_000 }, now: () => now });
    const ids: string[] = [];
    for (let index = 0; index < 5; index += 1) {
      const info = await sessions.create(ORIGIN, { provider: "claude" });
      ids.push(info.sessionId);
      await sessions.getForOrigin(info.sessionId, ORIGIN).end("requested");
      now += 10_000;
    }
    expect(sessions.counts).toEqual({ live: 0, ended: 3 });
    for (const id of ids.slice(0, 2)) {
      expect(() => sessions.getForOrigin(id, ORIGIN)).toThrowError(expect.objectContaining({ code: "THREAD_NOT_FOUND" }) as Error);
    }
    expect(sessions.getForOrigin(ids[2]!, ORIGIN).info().status).toBe("ended");
    // ids[2] ended at 1_020_000, ids[4] at 1_040_000.
    now = 1_020_000 + 60_000;
    expect(() => sessions.getForOrigin(ids[2]!, ORIGIN)).toThrowError(expect.objectContaining({ code: "THREAD_NOT_FOUND" }) as Error);
    expect(sessions.getForOrigin(ids[4]!, ORIGIN).info().status).toBe("ended");
    expect(sessions.counts.ended).toBe(2);
  });
});

describe("SessionManager retention", () => {
  const DAY_MS = 24 * 60 * 60_000;

  it("ends sessions unused past the retention setting, removes their workspaces, and keeps recent ones", async () => {
    let now = Date.parse("2026-01-01T00:00:00Z");
    const sessions = manager({ now: () => now });
    const stale = await sessions.create(ORIGIN, { provider: "claude" });
    now += 6 * DAY_MS;
    const recent = await sessions.create(ORIGIN, { provider: "claude" });
    now += 1.5 * DAY_MS;
    expect(await sessions.sweepExpired()).toBe(1);
    await sessions.workspacesRemoved();
    expect(published.filter((envelope) => envelope.event.type === "session-ended")).toEqual([
      expect.objectContaining({ sessionId: stale.sessionId, event: { type: "session-ended", reason: "expired" } }),
    ]);
    expect(await readdir(join(root, "home", "workspaces"))).toEqual([recent.workspace.path.split("/").at(-1)]);
    expect(sessions.getForOrigin(stale.sessionId, ORIGIN).info().status).toBe("ended");
    expect(sessions.getForOrigin(recent.sessionId, ORIGIN).info().status).toBe("idle");
    await sessions.shutdown();
  });

  it("ends a stored session that aged past the retention while Core was not running", async () => {
    let now = Date.parse("2026-01-01T00:00:00Z");
    const first = manager({ now: () => now });
    const info = await first.create(ORIGIN, { provider: "claude" });
    await first.shutdown();
    now += 8 * DAY_MS;
    const paths = resolveCorePaths({ PEDELEC_HOME: join(root, "home") });
    const second = manager({ now: () => now, store: undefined });
    expect(await second.restore(SessionStore.open(paths.sessionStoreFile))).toEqual({ restored: 0, interrupted: 0, expired: 1 });
    await second.workspacesRemoved();
    expect(second.getForOrigin(info.sessionId, ORIGIN).info().status).toBe("ended");
    expect(await readdir(join(root, "home", "workspaces"))).toEqual([]);
    await second.shutdown();
  });
});
