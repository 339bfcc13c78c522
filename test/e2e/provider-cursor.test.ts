import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { approvedSession, setUpE2e, type E2eEnvironment } from "./harness.js";
import { logOf } from "./page-scripts.js";

let environment: E2eEnvironment | undefined;
let cursorState: string | undefined;

afterEach(async () => {
  await environment?.close();
  environment = undefined;
  if (cursorState !== undefined) await rm(cursorState, { recursive: true, force: true });
  cursorState = undefined;
});

describe("a cursor session in real Chromium", () => {
  it("streams an answer once, runs a page tool through pedelec-cli and resumes its chat", async () => {
    // The cursor-agent stand-in keeps its chats under $CURSOR_CONFIG_DIR, like cursor-agent.
    cursorState = await mkdtemp(join(tmpdir(), "pedelec-e2e-cursor-state-"));
    environment = await setUpE2eWithCursorState(cursorState);
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
    expect(log.filter((entry) => entry.kind === "status").map((entry) => entry.status)).toEqual(["running", "waiting_tool_result", "running", "idle"]);
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

/** The harness's environment with CURSOR_CONFIG_DIR set for the browser, whose native host starts Core and its agents. */
async function setUpE2eWithCursorState(folder: string): Promise<E2eEnvironment> {
  const saved = process.env.CURSOR_CONFIG_DIR;
  process.env.CURSOR_CONFIG_DIR = folder;
  try {
    return await setUpE2e();
  } finally {
    if (saved === undefined) delete process.env.CURSOR_CONFIG_DIR;
    else process.env.CURSOR_CONFIG_DIR = saved;
  }
}
