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

describe("an opencode session in real Chromium", () => {
  it("answers, runs a page tool through pedelec-cli and resumes its session", async () => {
    // The opencode stand-in keeps its sessions under $XDG_DATA_HOME/opencode, like OpenCode.
    environment = await setUpE2eWithStateFolder("XDG_DATA_HOME");
    const dataHome = environment.stateFolder;
    const { page } = await approvedSession(environment, environment.server.url, '{ provider: "opencode" }');

    // OpenCode prints text only once a part is finished: the page gets it as one delta, then the completed message.
    expect(await page.evaluate(() => (window as any).send("reply: Hello from OpenCode"))).toEqual({ ok: true });
    let log = await logOf(page);
    expect(log.filter((entry) => entry.kind === "delta").map((entry) => entry.delta).join("")).toBe("Hello from OpenCode");
    expect(log.filter((entry) => entry.kind === "chat").map((entry) => entry.text)).toEqual(["Hello from OpenCode"]);

    await page.evaluate(() => ((window as any).log = []));
    expect(await page.evaluate(() => (window as any).send('call-tool add_todo {"title":"Buy milk"}'))).toEqual({ ok: true });
    log = await logOf(page);
    expect(await page.evaluate(() => (window as any).handlerCalls)).toEqual([{ title: "Buy milk" }]);
    expect(log.filter((entry) => entry.kind === "status").map((entry) => entry.status)).toEqual(["running", "waiting_tool_result", "running", "idle"]);
    expect(log.filter((entry) => entry.kind === "chat").at(-1)?.text).toBe('Tool add_todo returned: {"id":"card-1","title":"Buy milk"}');
    const activities = log.filter((entry) => entry.kind === "activity").map((entry) => `${entry.activity.kind}:${entry.activity.status}`);
    expect(activities).toEqual(["command:started", "command:completed"]);

    await page.evaluate(() => ((window as any).log = []));
    expect(await page.evaluate(() => (window as any).send("report-resume"))).toEqual({ ok: true });
    const resumed = (await logOf(page)).filter((entry) => entry.kind === "chat").at(-1)?.text as string;
    const providerSessionId = /^resumed=(ses_[A-Za-z0-9]+)$/.exec(resumed)?.[1];
    expect(providerSessionId).toBeDefined();
    expect(await readdir(join(dataHome, "opencode", "stand-in-sessions"))).toEqual([`${providerSessionId}.json`]);
  });
});
