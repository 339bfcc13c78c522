import { access, chmod, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { CoreServerFrame } from "@pedelec/protocol/core-wire";
import type { SessionEvent } from "@pedelec/protocol/session-events";
import { CoreConnection } from "../../core-client.js";
import { startCore, type RunningCore } from "../../core-daemon.js";

const STAND_IN_DIRECTORY = resolve(fileURLToPath(new URL("../../../../../test/stand-ins/antigravity", import.meta.url)));
/** The real agent command, as built by `npx tsc -b`; the stand-in runs it to reach the page. */
const PEDELEC_CLI_ENTRY = resolve(fileURLToPath(new URL("../../../../cli/dist/pedelec-cli-entry.js", import.meta.url)));
const ORIGIN = "http://127.0.0.1:4000";
const tools = [
  {
    name: "add_todo",
    description: "Add a card",
    argsSchema: { type: "object" as const, properties: { title: { type: "string" as const, minLength: 1 } }, required: ["title"] },
    timeoutMs: 5_000,
  },
];

let home: string;
let userHome: string;
let core: RunningCore | undefined;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  await access(PEDELEC_CLI_ENTRY).catch(() => {
    throw new Error(`${PEDELEC_CLI_ENTRY} is missing: build with "npx tsc -b" first`);
  });
});
beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), "pedelec-agy-core-"));
  userHome = join(home, "user-home");
  // The launcher Pedelec installs for agents, pinned to this test's home.
  await mkdir(join(home, "bin"), { recursive: true });
  await writeFile(
    join(home, "bin", "pedelec-cli"),
    `#!/bin/sh\nPEDELEC_HOME='${home}'\nexport PEDELEC_HOME\nexec '${process.execPath}' '${PEDELEC_CLI_ENTRY}' "$@"\n`,
  );
  await chmod(join(home, "bin", "pedelec-cli"), 0o755);
  env = { ...process.env, PEDELEC_HOME: home, PEDELEC_PROVIDER_PATH: STAND_IN_DIRECTORY, HOME: userHome };
});
afterEach(async () => {
  await core?.stop();
  core = undefined;
  await rm(home, { recursive: true, force: true });
});

/** Collects a connection's events and lets a test wait for one, with a deadline. */
function eventsOf(connection: CoreConnection) {
  const seen: SessionEvent[] = [];
  connection.onFrame((frame: CoreServerFrame) => {
    if (frame.kind === "event") seen.push(frame.envelope.event);
  });
  return {
    seen,
    async waitFor<T extends SessionEvent["type"]>(type: T, match: (event: Extract<SessionEvent, { type: T }>) => boolean = () => true) {
      const deadline = Date.now() + 15_000;
      for (;;) {
        const found = seen.find((event): event is Extract<SessionEvent, { type: T }> => event.type === type && match(event as Extract<SessionEvent, { type: T }>));
        if (found) return found;
        if (Date.now() > deadline) throw new Error(`no matching ${type} event within 15 s; saw ${seen.map((event) => event.type).join(", ")}`);
        await new Promise((resolvePromise) => setTimeout(resolvePromise, 10));
      }
    },
  };
}

function chatOf(seen: SessionEvent[], turnId: string) {
  const deltas = seen.flatMap((event) => (event.type === "chat-delta" && event.turnId === turnId ? [event.delta] : []));
  const completed = seen.flatMap((event) => (event.type === "chat-completed" && event.turnId === turnId ? [event.text] : []));
  return { deltas, completed };
}

describe("an antigravity session over the Core socket", () => {
  it("streams, calls a page tool, resumes its conversation and cancels a hanging turn", async () => {
    core = await startCore(env);
    const page = await CoreConnection.open(core.paths.socketPath);
    const events = eventsOf(page);
    const { sessionId, workspace } = await page.request("createSession", { provider: "antigravity", skills: { guidance: "", tools } }, ORIGIN);

    // A streamed answer.
    await page.request("sendText", { sessionId, turnId: "turn-1", text: "reply: Hello from Antigravity" }, ORIGIN);
    await events.waitFor("turn-completed", (event) => event.turnId === "turn-1");
    const first = chatOf(events.seen, "turn-1");
    expect(first.deltas.length).toBeGreaterThan(3);
    expect(first.deltas.join("")).toBe("Hello from Antigravity");
    expect(first.completed).toEqual(["Hello from Antigravity"]);

    // A page tool call, answered by the page; this turn resumes the conversation.
    await page.request("sendText", { sessionId, turnId: "turn-2", text: 'call-tool add_todo {"title":"Milk"}' }, ORIGIN);
    const requested = await events.waitFor("tool-call-requested");
    expect(requested).toMatchObject({ turnId: "turn-2", toolName: "add_todo", args: { title: "Milk" } });
    await expect(
      page.request("submitToolResult", { sessionId, toolRequestId: requested.toolRequestId, outcome: { ok: true, result: { id: "c1" } } }, ORIGIN),
    ).resolves.toEqual({ accepted: true });
    await events.waitFor("turn-completed", (event) => event.turnId === "turn-2");
    expect(chatOf(events.seen, "turn-2").completed).toEqual(["Calling the page tool add_todo.", 'Tool add_todo returned: {"id":"c1"}']);
    const activities = events.seen.flatMap((event) => (event.type === "activity-updated" && event.turnId === "turn-2" ? [event.activity] : []));
    expect(activities.map((activity) => [activity.kind, activity.status])).toEqual([
      ["command", "started"],
      ["command", "completed"],
    ]);

    // The third turn continues the same conversation.
    await page.request("sendText", { sessionId, turnId: "turn-3", text: "report-resume" }, ORIGIN);
    await events.waitFor("turn-completed", (event) => event.turnId === "turn-3");
    const [resumed] = chatOf(events.seen, "turn-3").completed;
    const conversationId = /^resumed=([0-9a-f-]{36})$/.exec(resumed ?? "")?.[1];
    expect(conversationId).toBeDefined();
    const stored = await readFile(join(userHome, ".gemini", "antigravity-cli", "conversations", `${conversationId}.jsonl`), "utf8");
    expect(stored).toContain("Hello from Antigravity");
    expect(stored).toContain("report-resume");

    // Cancel mid-turn: the turn fails with TURN_CANCELLED and nothing of the agent's process group is left.
    await page.request("sendText", { sessionId, turnId: "turn-4", text: "hang" }, ORIGIN);
    const deadline = Date.now() + 10_000;
    let pid = 0;
    while (pid === 0) {
      pid = Number(await readFile(join(workspace.path, ".stand-in-hanging"), "utf8").catch(() => "0"));
      if (pid === 0 && Date.now() > deadline) throw new Error("the agent never started hanging");
      if (pid === 0) await new Promise((resolvePromise) => setTimeout(resolvePromise, 20));
    }
    await expect(page.request("cancelTurn", { sessionId }, ORIGIN)).resolves.toEqual({ cancelled: true });
    expect((await events.waitFor("turn-failed", (event) => event.turnId === "turn-4")).error.code).toBe("TURN_CANCELLED");
    expect(() => process.kill(-pid, 0)).toThrow(expect.objectContaining({ code: "ESRCH" }));
    expect(events.seen.filter((event) => event.type === "turn-failed")).toHaveLength(1);
    page.close();
  });
});
