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

describe("an antigravity session in real Chromium", () => {
  it("streams, runs a page tool through pedelec-cli and resumes its conversation", async () => {
    // The agy stand-in keeps its conversations under $HOME; the native host pins PEDELEC_HOME itself.
    environment = await setUpE2eWithStateFolder("HOME");
    const userHome = environment.stateFolder;
    const { page } = await approvedSession(environment, environment.server.url, '{ provider: "antigravity" }');

    expect(await page.evaluate(() => (window as any).send("reply: Hello from Antigravity"))).toEqual({ ok: true });
    let log = await logOf(page);
    const deltas = log.filter((entry) => entry.kind === "delta");
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.map((entry) => entry.delta).join("")).toBe("Hello from Antigravity");
    expect(log.filter((entry) => entry.kind === "chat").map((entry) => entry.text)).toEqual(["Hello from Antigravity"]);

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
    expect(log.filter((entry) => entry.kind === "chat").at(-1)?.text).toBe('Tool add_todo returned: {"id":"card-1","title":"Buy milk"}');
    expect(log.some((entry) => entry.kind === "activity" && entry.activity.kind === "command")).toBe(true);

    await page.evaluate(() => ((window as any).log = []));
    expect(await page.evaluate(() => (window as any).send("report-resume"))).toEqual({ ok: true });
    const resumed = (await logOf(page)).filter((entry) => entry.kind === "chat").at(-1)?.text as string;
    const conversationId = /^resumed=([0-9a-f-]{36})$/.exec(resumed)?.[1];
    expect(conversationId).toBeDefined();
    expect(await readdir(join(userHome, ".gemini", "antigravity-cli", "conversations"))).toEqual([`${conversationId}.jsonl`]);
  });
});
