import { access, readFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import type { SessionEvent } from "@pedelec/protocol/session-events";
import { CoreConnection } from "@pedelec/core-client/core-client";
import { addTodoTool } from "../../testing/add-todo-tool.js";
import { useCoreUnderTest } from "../../testing/core-home.js";
import { collectSessionEvents } from "../../testing/session-events.js";

const STAND_IN_DIRECTORY = resolve(fileURLToPath(new URL("../../../../../test/stand-ins/antigravity", import.meta.url)));
/** The real agent command, as built by `npx tsc -b`; the stand-in runs it to reach the page. */
const PEDELEC_CLI_ENTRY = resolve(fileURLToPath(new URL("../../../../cli/dist/pedelec-cli-entry.js", import.meta.url)));
const ORIGIN = "http://127.0.0.1:4000";
const tools = [addTodoTool(5_000)];

beforeAll(async () => {
  await access(PEDELEC_CLI_ENTRY).catch(() => {
    throw new Error(`${PEDELEC_CLI_ENTRY} is missing: build with "npx tsc -b" first`);
  });
});
const coreUnderTest = useCoreUnderTest({
  prefix: "pedelec-agy-core-",
  providerPath: STAND_IN_DIRECTORY,
  stateFolders: { HOME: "user-home" },
  pedelecCliEntry: PEDELEC_CLI_ENTRY,
});

function chatOf(seen: SessionEvent[], turnId: string) {
  const deltas = seen.flatMap((event) => (event.type === "chat-delta" && event.turnId === turnId ? [event.delta] : []));
  const completed = seen.flatMap((event) => (event.type === "chat-completed" && event.turnId === turnId ? [event.text] : []));
  return { deltas, completed };
}

describe("an antigravity session over the Core socket", () => {
  it("streams, calls a page tool, resumes its conversation and cancels a hanging turn", async () => {
    const core = await coreUnderTest.start();
    const page = await CoreConnection.open(core.paths.socketPath);
    const events = collectSessionEvents(page, 15_000);
    const { sessionId, workspace } = await page.request("createSession", { provider: "antigravity", skills: { guidance: "", tools } }, ORIGIN);

    // A streamed answer.
    await page.request("sendText", { sessionId, turnId: "turn-1", text: "reply: Hello from Antigravity" }, ORIGIN);
    await events.until("turn-completed", (event) => event.turnId === "turn-1");
    const first = chatOf(events.seen, "turn-1");
    // Deltas that follow each other closely arrive joined (see CHAT_DELTA_WINDOW_MS).
    expect(first.deltas.length).toBeGreaterThan(0);
    expect(first.deltas.join("")).toBe("Hello from Antigravity");
    expect(first.completed).toEqual(["Hello from Antigravity"]);

    // A page tool call, answered by the page; this turn resumes the conversation.
    await page.request("sendText", { sessionId, turnId: "turn-2", text: 'call-tool add_todo {"title":"Milk"}' }, ORIGIN);
    const requested = await events.until("tool-call-requested");
    expect(requested).toMatchObject({ turnId: "turn-2", toolName: "add_todo", args: { title: "Milk" } });
    await expect(
      page.request("submitToolResult", { sessionId, toolRequestId: requested.toolRequestId, outcome: { ok: true, result: { id: "c1" } } }, ORIGIN),
    ).resolves.toEqual({ accepted: true });
    await events.until("turn-completed", (event) => event.turnId === "turn-2");
    expect(chatOf(events.seen, "turn-2").completed).toEqual(["Calling the page tool add_todo.", 'Tool add_todo returned: {"id":"c1"}']);
    const activities = events.seen.flatMap((event) => (event.type === "activity-updated" && event.turnId === "turn-2" ? [event.activity] : []));
    expect(activities.map((activity) => [activity.kind, activity.status])).toEqual([
      ["command", "started"],
      ["command", "completed"],
    ]);

    // The third turn continues the same conversation.
    await page.request("sendText", { sessionId, turnId: "turn-3", text: "report-resume" }, ORIGIN);
    await events.until("turn-completed", (event) => event.turnId === "turn-3");
    const [resumed] = chatOf(events.seen, "turn-3").completed;
    const conversationId = /^resumed=([0-9a-f-]{36})$/.exec(resumed ?? "")?.[1];
    expect(conversationId).toBeDefined();
    const stored = await readFile(
      join(coreUnderTest.home, "user-home", ".gemini", "antigravity-cli", "conversations", `${conversationId}.jsonl`),
      "utf8",
    );
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
    expect((await events.until("turn-failed", (event) => event.turnId === "turn-4")).error.code).toBe("TURN_CANCELLED");
    expect(() => process.kill(-pid, 0)).toThrow(expect.objectContaining({ code: "ESRCH" }));
    expect(events.seen.filter((event) => event.type === "turn-failed")).toHaveLength(1);
    page.close();
  });
});
