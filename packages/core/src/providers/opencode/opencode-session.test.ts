import { readFile, readdir } from "node:fs/promises";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import type { SessionEvent } from "@pedelec/protocol/session-events";
import { CoreConnection } from "@pedelec/core-client/core-client";
import { addTodoTool } from "../../testing/add-todo-tool.js";
import { useCoreUnderTest } from "../../testing/core-home.js";
import { groupAlive } from "../../testing/process-group.js";
import { collectSessionEvents } from "../../testing/session-events.js";

const standInDir = resolve(fileURLToPath(new URL("../../../../../test/stand-ins/opencode", import.meta.url)));
/** The real agent command, as built; Core puts PEDELEC_HOME/bin first on the agent's PATH. */
const pedelecCliEntry = resolve(fileURLToPath(new URL("../../../../cli/dist/pedelec-cli-entry.js", import.meta.url)));
const ORIGIN = "http://127.0.0.1:4000";
const tools = [addTodoTool(5_000)];

const coreUnderTest = useCoreUnderTest({
  prefix: "pedelec-opencode-core-",
  providerPath: standInDir,
  stateFolders: { XDG_DATA_HOME: "opencode-data" },
  pedelecCliEntry,
});

const ofTurn =
  <T extends SessionEvent["type"]>(type: T, turnId: string) =>
  (event: SessionEvent): event is Extract<SessionEvent, { type: T }> =>
    event.type === type && "turnId" in event && event.turnId === turnId;

describe("opencode sessions through Core", () => {
  it("answers, passes a tool call to the page and back, resumes, and cancels a hanging turn", { timeout: 60_000 }, async () => {
    const core = await coreUnderTest.start();
    const page = await CoreConnection.open(core.paths.socketPath);
    const events = collectSessionEvents(page);
    const { sessionId, workspace } = await page.request("createSession", { provider: "opencode", skills: { guidance: "", tools } }, ORIGIN);

    // A streamed answer: OpenCode has no deltas, so Core hands the completed message on as one delta.
    await page.request("sendText", { sessionId, turnId: "turn-1", text: "reply: Hello from OpenCode." }, ORIGIN);
    await events.until("turn-completed", (event) => event.turnId === "turn-1");
    const deltas = events.seen.filter(ofTurn("chat-delta", "turn-1"));
    expect(deltas.map((event) => event.delta).join("")).toBe("Hello from OpenCode.");
    expect(events.seen.filter(ofTurn("chat-completed", "turn-1")).map((event) => event.text)).toEqual(["Hello from OpenCode."]);

    // The agent calls a page tool through the real pedelec-cli; the page answers it.
    await page.request("sendText", { sessionId, turnId: "turn-2", text: 'call-tool add_todo {"title":"Milk"}' }, ORIGIN);
    const requested = await events.until("tool-call-requested", (event) => event.turnId === "turn-2");
    expect(requested).toMatchObject({ toolName: "add_todo", args: { title: "Milk" } });
    await expect(
      page.request("submitToolResult", { sessionId, toolRequestId: requested.toolRequestId, outcome: { ok: true, result: { id: "c1" } } }, ORIGIN),
    ).resolves.toEqual({ accepted: true });
    await events.until("turn-completed", (event) => event.turnId === "turn-2");
    const answer = events.seen.filter(ofTurn("chat-completed", "turn-2")).map((event) => event.text);
    expect(answer).toHaveLength(1);
    expect(answer[0]).toMatch(/^Tool add_todo returned: .*"c1"/);
    const activities = events.seen.filter(ofTurn("activity-updated", "turn-2")).map((event) => event.activity);
    // The call went through the session's MCP server (pedelec-cli mcp), as OpenCode's own tool pedelec_add_todo.
    expect(activities.map((activity) => [activity.kind, activity.status])).toEqual([
      ["tool", "started"],
      ["tool", "completed"],
    ]);
    expect(activities[0]?.title).toContain("pedelec_add_todo");

    // The next turn resumes the same OpenCode session.
    await page.request("sendText", { sessionId, turnId: "turn-3", text: "report-resume" }, ORIGIN);
    const resumed = await events.until("chat-completed", (event) => event.turnId === "turn-3");
    const [stored] = await readdir(join(coreUnderTest.home, "opencode-data", "opencode", "stand-in-sessions"));
    expect(resumed.text).toBe(`resumed=${stored?.replace(/\.json$/, "")}`);
    expect(resumed.text).toMatch(/^resumed=ses_/);
    await events.until("turn-completed", (event) => event.turnId === "turn-3");

    // Cancelling a hanging turn stops the whole process group of the agent.
    await page.request("sendText", { sessionId, turnId: "turn-4", text: "hang" }, ORIGIN);
    const pid = await (async () => {
      const deadline = Date.now() + 10_000;
      for (;;) {
        const text = await readFile(join(workspace.path, ".stand-in-hanging"), "utf8").catch(() => "");
        if (text !== "") return Number(text);
        if (Date.now() > deadline) throw new Error("the agent did not start hanging");
        await new Promise((resolvePromise) => setTimeout(resolvePromise, 20));
      }
    })();
    expect(groupAlive(pid)).toBe(true);
    await expect(page.request("cancelTurn", { sessionId }, ORIGIN)).resolves.toEqual({ cancelled: true });
    expect((await events.until("turn-failed", (event) => event.turnId === "turn-4")).error.code).toBe("TURN_CANCELLED");
    await expect.poll(() => groupAlive(pid), { timeout: 10_000, interval: 50 }).toBe(false);
    expect(events.seen.some((event) => event.type === "turn-failed" && event.turnId !== "turn-4")).toBe(false);
    page.close();
  });
});
