import { chmod, mkdir, mkdtemp, readFile, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { build, type Plugin } from "esbuild";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { CoreServerFrame } from "@pedelec/protocol/core-wire";
import type { SessionEvent } from "@pedelec/protocol/session-events";
import { CoreConnection } from "../../core-client.js";
import { startCore, type RunningCore } from "../../core-daemon.js";

const REPO = resolve(fileURLToPath(new URL("../../../../../", import.meta.url)));
const STAND_IN_DIRECTORY = join(REPO, "test/stand-ins/codex");
const ORIGIN = "http://127.0.0.1:4000";
const tools = [
  {
    name: "add_todo",
    description: "Add a card",
    argsSchema: { type: "object" as const, properties: { title: { type: "string" as const } }, required: ["title"] },
    timeoutMs: 5_000,
  },
];

/** Resolves `@pedelec/<package>/<module>` to its TypeScript source, as the unit tests do. */
const pedelecSources: Plugin = {
  name: "pedelec-sources",
  setup(builder) {
    builder.onResolve({ filter: /^@pedelec\/[a-z-]+\/.+$/ }, (args) => {
      const [, packageName, modulePath] = /^@pedelec\/([a-z-]+)\/(.+)$/.exec(args.path) ?? [];
      return { path: join(REPO, "packages", packageName ?? "", "src", `${modulePath ?? ""}.ts`) };
    });
  },
};

let toolDirectory: string;
let pedelecCli: string;
let home: string;
let core: RunningCore | undefined;

beforeAll(async () => {
  // The agent's real pedelec-cli, built from source: the stand-in runs it through /bin/sh like codex would.
  toolDirectory = await mkdtemp(join(tmpdir(), "pedelec-codex-cli-"));
  pedelecCli = join(toolDirectory, "pedelec-cli.mjs");
  await build({
    entryPoints: [join(REPO, "packages/cli/src/pedelec-cli-entry.ts")],
    outfile: pedelecCli,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    banner: { js: "#!/usr/bin/env node" },
    plugins: [pedelecSources],
    logLevel: "silent",
  });
});
afterAll(async () => {
  await rm(toolDirectory, { recursive: true, force: true });
});

beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), "pedelec-codex-core-"));
  // Core puts PEDELEC_HOME/bin first on the agent's PATH, where the installed launchers live.
  await mkdir(join(home, "bin"), { recursive: true, mode: 0o700 });
  const launcher = join(home, "bin", "pedelec-cli");
  await writeFile(launcher, `#!/bin/sh\nexec "${process.execPath}" "${pedelecCli}" "$@"\n`);
  await chmod(launcher, 0o755);
});
afterEach(async () => {
  await core?.stop();
  core = undefined;
  await rm(home, { recursive: true, force: true });
});

/** Collects a connection's events and waits for one that matches, with a deadline. */
function eventsOf(connection: CoreConnection) {
  const seen: SessionEvent[] = [];
  const waiters: { match: (event: SessionEvent) => boolean; resolve: (event: SessionEvent) => void }[] = [];
  connection.onFrame((frame: CoreServerFrame) => {
    if (frame.kind !== "event") return;
    seen.push(frame.envelope.event);
    for (const waiter of [...waiters]) {
      if (!waiter.match(frame.envelope.event)) continue;
      waiters.splice(waiters.indexOf(waiter), 1);
      waiter.resolve(frame.envelope.event);
    }
  });
  return {
    seen,
    waitFor<T extends SessionEvent["type"]>(type: T, turnId: string, timeoutMs = 15_000): Promise<Extract<SessionEvent, { type: T }>> {
      const match = (event: SessionEvent) => event.type === type && "turnId" in event && event.turnId === turnId;
      const already = seen.find(match);
      if (already) return Promise.resolve(already as Extract<SessionEvent, { type: T }>);
      return new Promise((resolvePromise, reject) => {
        const timer = setTimeout(() => reject(new Error(`no ${type} of ${turnId} within ${timeoutMs} ms`)), timeoutMs);
        waiters.push({
          match,
          resolve: (event) => {
            clearTimeout(timer);
            resolvePromise(event as Extract<SessionEvent, { type: T }>);
          },
        });
      });
    },
    ofTurn(turnId: string): SessionEvent[] {
      return seen.filter((event) => "turnId" in event && event.turnId === turnId);
    },
  };
}

async function waitForFile(file: string, timeoutMs = 10_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const text = await readFile(file, "utf8").catch(() => "");
    if (text !== "") return text;
    if (Date.now() > deadline) throw new Error(`${file} did not appear within ${timeoutMs} ms`);
    await new Promise((resolvePromise) => setTimeout(resolvePromise, 20));
  }
}

describe("a codex session over the Core socket", () => {
  it("answers, passes a tool call to the page and back, resumes its thread, and cancels a hanging turn", async () => {
    core = await startCore({ ...process.env, PEDELEC_HOME: home, PEDELEC_PROVIDER_PATH: STAND_IN_DIRECTORY, CODEX_HOME: join(home, "codex-state") });
    const page = await CoreConnection.open(core.paths.socketPath);
    const events = eventsOf(page);
    const { sessionId, workspace } = await page.request("createSession", { provider: "codex", skills: { guidance: "", tools } }, ORIGIN);

    // A plain answer: codex sends the message whole, Core hands it to the page as a delta and a completion.
    await page.request("sendText", { sessionId, turnId: "turn-1", text: "reply: Hello from codex." }, ORIGIN);
    await events.waitFor("turn-completed", "turn-1");
    const completed = await events.waitFor("chat-completed", "turn-1");
    expect(completed.text).toBe("Hello from codex.");
    const deltas = events.ofTurn("turn-1").flatMap((event) => (event.type === "chat-delta" && event.messageId === completed.messageId ? [event.delta] : []));
    expect(deltas.join("")).toBe("Hello from codex.");

    // A tool call: the agent runs pedelec-cli in codex's sandbox, the page answers.
    await page.request("sendText", { sessionId, turnId: "turn-2", text: 'call-tool add_todo {"title":"Milk"}' }, ORIGIN);
    const requested = await events.waitFor("tool-call-requested", "turn-2");
    expect(requested).toMatchObject({ toolName: "add_todo", args: { title: "Milk" } });
    await page.request("submitToolResult", { sessionId, toolRequestId: requested.toolRequestId, outcome: { ok: true, result: { id: "c1" } } }, ORIGIN);
    await events.waitFor("turn-completed", "turn-2");
    expect((await events.waitFor("chat-completed", "turn-2")).text).toBe('Tool add_todo returned: {"id":"c1"}');
    const commandStatuses = events
      .ofTurn("turn-2")
      .flatMap((event) => (event.type === "activity-updated" && event.activity.kind === "command" ? [event.activity.status] : []));
    expect(commandStatuses).toEqual(["started", "completed"]);

    // The next turn continues the same codex thread.
    await page.request("sendText", { sessionId, turnId: "turn-3", text: "report-resume" }, ORIGIN);
    await events.waitFor("turn-completed", "turn-3");
    const resumed = (await events.waitFor("chat-completed", "turn-3")).text;
    const [, threadId] = /^resumed=([0-9a-f-]{36})$/.exec(resumed) ?? [];
    expect(threadId).toBeDefined();
    const day = new Date().toISOString().slice(0, 10).split("-");
    const rollouts = await readdir(join(home, "codex-state", "sessions", ...day));
    expect(rollouts).toEqual([expect.stringMatching(new RegExp(`-${threadId}\\.jsonl$`))]);

    // Cancelling a hanging turn ends the CLI's whole process group.
    await page.request("sendText", { sessionId, turnId: "turn-4", text: "hang" }, ORIGIN);
    const pid = Number(await waitForFile(join(workspace.path, ".stand-in-hanging")));
    await expect(page.request("cancelTurn", { sessionId }, ORIGIN)).resolves.toEqual({ cancelled: true });
    const failed = await events.waitFor("turn-failed", "turn-4");
    expect(failed.error.code).toBe("TURN_CANCELLED");
    expect(() => process.kill(-pid, 0)).toThrowError(expect.objectContaining({ code: "ESRCH" }) as Error);
    page.close();
  });
});
