import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { approvedSession, setUpE2eWithStateFolder, type E2eEnvironmentWithState } from "./harness.js";
import { logOf } from "./page-scripts.js";

let environment: E2eEnvironmentWithState | undefined;

afterEach(async () => {
  await environment?.close();
  environment = undefined;
});

describe("a cursor session in real Chromium", () => {
  it("streams an answer once, runs a page tool through pedelec-cli and resumes its chat", async () => {
    // The cursor-agent stand-in keeps its chats under $CURSOR_CONFIG_DIR, like cursor-agent.
    environment = await setUpE2eWithStateFolder("CURSOR_CONFIG_DIR");
    const cursorState = environment.stateFolder;
    const { page } = await approvedSession(environment, environment.server.url, '{ provider: "cursor" }');

    // Cursor repeats text in its partial output; the page still gets each piece once.
    expect(await page.evaluate(() => (window as any).send("reply: Hello from Cursor"))).toEqual({ ok: true });
    let log = await logOf(page);
    const deltas = log.filter((entry) => entry.kind === "delta").map((entry) => entry.delta as string);
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join("")).toBe("Hello from Cursor");
    expect(log.filter((entry) => entry.kind === "chat").map((entry) => entry.text)).toEqual(["Hello from Cursor"]);

    await page.evaluate(() => ((window as any).log = []));
    expect(await page.evaluate(() => (window as any).send('call-tool add_todo {"title":"Buy milk"}'))).toEqual({ ok: true });
    log = await logOf(page);
    expect(await page.evaluate(() => (window as any).handlerCalls)).toEqual([{ title: "Buy milk" }]);
    expect(log.filter((entry) => entry.kind === "status").map((entry) => entry.status)).toEqual([
      "running",
      "waiting_tool_result",
      "running",
      "idle",
    ]);
    expect(log.filter((entry) => entry.kind === "chat").map((entry) => entry.text)).toEqual([
      "Calling add_todo.",
      'Tool add_todo returned: {"id":"card-1","title":"Buy milk"}',
    ]);
    const activities = log.filter((entry) => entry.kind === "activity").map((entry) => `${entry.activity.kind}:${entry.activity.status}`);
    expect(activities).toEqual(["command:started", "command:completed"]);

    await page.evaluate(() => ((window as any).log = []));
    expect(await page.evaluate(() => (window as any).send("report-resume"))).toEqual({ ok: true });
    const resumed = (await logOf(page)).filter((entry) => entry.kind === "chat").at(-1)?.text as string;
    const chatId = /^resumed=([0-9a-f-]{36})$/.exec(resumed)?.[1];
    expect(chatId).toBeDefined();
    const [workspaceFolder] = await readdir(join(cursorState, "chats"));
    expect(await readdir(join(cursorState, "chats", workspaceFolder ?? ""))).toEqual([`${chatId}.jsonl`]);
  });
});
