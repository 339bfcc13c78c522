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

describe("a codex session in real Chromium", () => {
  it("answers, runs a page tool through pedelec-cli inside codex's sandbox and resumes its thread", async () => {
    // The codex stand-in keeps its threads under $CODEX_HOME/sessions, like codex.
    environment = await setUpE2eWithStateFolder("CODEX_HOME");
    const codexHome = environment.stateFolder;
    const { page } = await approvedSession(environment, environment.server.url, '{ provider: "codex" }');

    // codex sends each message whole: the page gets it as one delta, then the completed message.
    expect(await page.evaluate(() => (window as any).send("reply: Hello from Codex"))).toEqual({ ok: true });
    let log = await logOf(page);
    expect(log.filter((entry) => entry.kind === "delta").map((entry) => entry.delta)).toEqual(["Hello from Codex"]);
    expect(log.filter((entry) => entry.kind === "chat").map((entry) => entry.text)).toEqual(["Hello from Codex"]);

    await page.evaluate(() => ((window as any).log = []));
    expect(await page.evaluate(() => (window as any).send('call-tool add_todo {"title":"Buy milk"}'))).toEqual({ ok: true });
    log = await logOf(page);
    expect(await page.evaluate(() => (window as any).handlerCalls)).toEqual([{ title: "Buy milk" }]);
    expect(log.filter((entry) => entry.kind === "status").map((entry) => entry.status)).toEqual(["running", "waiting_tool_result", "running", "idle"]);
    expect(log.filter((entry) => entry.kind === "chat").map((entry) => entry.text)).toEqual([
      'Tool add_todo returned: {"id":"card-1","title":"Buy milk"}',
    ]);
    const activities = log.filter((entry) => entry.kind === "activity").map((entry) => `${entry.activity.kind}:${entry.activity.status}`);
    expect(activities).toEqual(["command:started", "command:completed"]);

    await page.evaluate(() => ((window as any).log = []));
    expect(await page.evaluate(() => (window as any).send("report-resume"))).toEqual({ ok: true });
    const resumed = (await logOf(page)).filter((entry) => entry.kind === "chat").at(-1)?.text as string;
    const threadId = /^resumed=([0-9a-f-]{36})$/.exec(resumed)?.[1];
    expect(threadId).toBeDefined();
    const day = new Date().toISOString().slice(0, 10).split("-");
    expect(await readdir(join(codexHome, "sessions", ...day))).toEqual([expect.stringMatching(new RegExp(`-${threadId}\\.jsonl$`))]);
  });
});
