import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { CoreConnection } from "@pedelec/core-client/core-client";
import { addTodoTool } from "../../testing/add-todo-tool.js";
import { useCoreUnderTest } from "../../testing/core-home.js";
import { groupAlive } from "../../testing/process-group.js";
import { collectSessionEvents } from "../../testing/session-events.js";

const STAND_IN_DIRECTORY = resolve(fileURLToPath(new URL("../../../../../test/stand-ins/cursor", import.meta.url)));
/** The agent command, as built into packages/cli (the launcher Pedelec installs runs the same entry). */
const PEDELEC_CLI_ENTRY = resolve(fileURLToPath(new URL("../../../../cli/bin/pedelec-cli.js", import.meta.url)));
const ORIGIN = "http://127.0.0.1:4000";
const tools = [addTodoTool(5_000)];

const coreUnderTest = useCoreUnderTest({
  prefix: "pedelec-cursor-core-",
  providerPath: STAND_IN_DIRECTORY,
  stateFolders: { CURSOR_CONFIG_DIR: "cursor-state" },
  pedelecCliEntry: PEDELEC_CLI_ENTRY,
});

describe("a cursor session over the Core socket", () => {
  it("streams, calls a page tool, resumes its chat and cancels a hanging turn", async () => {
    const core = await coreUnderTest.start();
    const page = await CoreConnection.open(core.paths.socketPath);
    const events = collectSessionEvents(page, 15_000);
    const { sessionId, workspace } = await page.request("createSession", { provider: "cursor", skills: { guidance: "", tools } }, ORIGIN);

    // A streamed answer: several deltas that add up to the completed message, once.
    await page.request("sendText", { sessionId, turnId: "turn-1", text: "reply: Hello from Cursor, streamed in pieces." }, ORIGIN);
    const completed = await events.until("chat-completed", (event) => event.turnId === "turn-1");
    expect(completed.text).toBe("Hello from Cursor, streamed in pieces.");
    const deltas = events.seen.flatMap((event) => (event.type === "chat-delta" && event.messageId === completed.messageId ? [event.delta] : []));
    // Deltas that follow each other closely arrive joined (see CHAT_DELTA_WINDOW_MS); the text is whole and in order.
    expect(deltas.length).toBeGreaterThan(0);
    expect(deltas.join("")).toBe(completed.text);
    await events.until("turn-completed", (event) => event.turnId === "turn-1");

    // A page tool called through pedelec-cli, answered by the page.
    await page.request("sendText", { sessionId, turnId: "turn-2", text: 'call-tool add_todo {"title":"Milk"}' }, ORIGIN);
    const requested = await events.until("tool-call-requested", (event) => event.turnId === "turn-2");
    expect(requested).toMatchObject({ toolName: "add_todo", args: { title: "Milk" } });
    await expect(
      page.request("submitToolResult", { sessionId, toolRequestId: requested.toolRequestId, outcome: { ok: true, result: { id: "c1" } } }, ORIGIN),
    ).resolves.toEqual({ accepted: true });
    await events.until("turn-completed", (event) => event.turnId === "turn-2");
    const answers = events.seen.flatMap((event) => (event.type === "chat-completed" && event.turnId === "turn-2" ? [event.text] : []));
    expect(answers.at(-1)).toMatch(/^Tool add_todo returned: .*"c1"/);
    const commands = events.seen.flatMap((event) =>
      event.type === "activity-updated" && event.turnId === "turn-2" && event.activity.kind === "command" ? [event.activity.status] : [],
    );
    expect(commands).toEqual(["started", "completed"]);

    // The next turn resumes the same chat.
    await page.request("sendText", { sessionId, turnId: "turn-3", text: "report-resume" }, ORIGIN);
    const resumed = await events.until("chat-completed", (event) => event.turnId === "turn-3");
    expect(resumed.text).toMatch(/^resumed=[0-9a-f-]{36}$/);
    // …the one the first turn started: its file at the CLI holds every turn's prompt.
    const chatId = resumed.text.slice("resumed=".length);
    const chatFolder = createHash("md5").update(workspace.path).digest("hex");
    const chat = await readFile(join(coreUnderTest.home, "cursor-state", "chats", chatFolder, `${chatId}.jsonl`), "utf8");
    expect(chat).toContain("Hello from Cursor, streamed in pieces.");
    expect(chat).toContain("call-tool add_todo");
    await events.until("turn-completed", (event) => event.turnId === "turn-3");

    // Cancelling a hanging turn leaves no process of its group.
    await page.request("sendText", { sessionId, turnId: "turn-4", text: "hang" }, ORIGIN);
    const marker = join(workspace.path, ".stand-in-hanging");
    const deadline = Date.now() + 10_000;
    let pid = 0;
    while (pid === 0) {
      if (Date.now() > deadline) throw new Error("the stand-in never started hanging");
      pid = Number(await readFile(marker, "utf8").catch(() => "0"));
      if (pid === 0) await new Promise((resolvePromise) => setTimeout(resolvePromise, 20));
    }
    expect(groupAlive(pid)).toBe(true);
    await expect(page.request("cancelTurn", { sessionId }, ORIGIN)).resolves.toEqual({ cancelled: true });
    expect((await events.until("turn-failed", (event) => event.turnId === "turn-4")).error.code).toBe("TURN_CANCELLED");
    await expect.poll(() => groupAlive(pid), { timeout: 5_000, interval: 50 }).toBe(false);
    page.close();
  });
});
