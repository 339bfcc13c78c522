import { access, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  approvedSession,
  corePidOf,
  nativeHostPidsFor,
  setUpE2e,
  setUpE2eWithStateFolder,
  standInProcessesIn,
  type E2eEnvironment,
} from "./harness.js";
import { logOf } from "./page-scripts.js";

let environment: E2eEnvironment | undefined;
const scratch: string[] = [];
afterEach(async () => {
  await environment?.close();
  environment = undefined;
  for (const folder of scratch.splice(0)) await rm(folder, { recursive: true, force: true });
});

/** Sends `text` from the page and returns the agent's last completed message. */
async function turn(page: import("playwright-core").Page, text: string): Promise<string> {
  const sent = await page.evaluate((message) => (window as any).send(message), text);
  expect(sent).toEqual({ ok: true });
  return (await logOf(page)).filter((entry) => entry.kind === "chat").at(-1).text as string;
}

const isPresent = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );

/** A session of the stand-in cursor-agent, which still calls page tools through pedelec-cli in its shell. */
const CURSOR = '{ provider: "cursor" }';

describe("what an agent can reach", () => {
  it("refuses a tool call naming another session's thread, made by a real agent inside its turn", async () => {
    environment = await setUpE2eWithStateFolder("CURSOR_CONFIG_DIR", { startCore: true });
    const victim = await approvedSession(environment);
    const attacker = await approvedSession(environment, environment.otherOriginUrl, CURSOR);

    // The attacker's agent knows the victim's thread id (it can list PEDELEC_HOME/workspaces) and tries it.
    const stolen = await turn(attacker.page, `bash: pedelec-cli --thread-id ${victim.sessionId} tool-call add_todo '{"title":"stolen"}'`);
    expect(stolen).toMatch(/^Shell exit 1: \{"error":\{"code":"THREAD_ACCESS_DENIED"/);
    expect(await victim.page.evaluate(() => (window as any).handlerCalls)).toEqual([]);

    // Its own thread still works, through the very same command.
    const own = await turn(attacker.page, `bash: pedelec-cli --thread-id $PEDELEC_THREAD_ID tool-call add_todo '{"title":"mine"}'`);
    expect(own).toMatch(/^Shell exit 0: \{"id":"card-1","title":"mine"\}/);
    expect(await attacker.page.evaluate(() => (window as any).handlerCalls)).toEqual([{ title: "mine" }]);
  });

  it("passes 1 MiB of tool arguments through stdin, more than one argv element can hold", async () => {
    environment = await setUpE2eWithStateFolder("CURSOR_CONFIG_DIR", { startCore: true });
    const tool = `{ provider: "cursor", skills: { guidance: "", tools: [window.sdk.defineTool({ name: "save_note", description: "Save a note",
      argsSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] } })] } }`;
    const { page, workspace } = await approvedSession(environment, environment.server.url, tool);
    await page.evaluate(() => (window as any).session.onTool("save_note", (args: { text: string }) => ({ length: args.text.length })));
    // The agent wrote its arguments to a file in its workspace (Linux caps one argv element at 128 KiB).
    await writeFile(join(workspace.path, "note.json"), JSON.stringify({ text: "x".repeat(1024 * 1024) }));
    const throughStdin = await turn(page, "bash: pedelec-cli --thread-id $PEDELEC_THREAD_ID tool-call save_note - < note.json");
    expect(throughStdin).toBe('Shell exit 0: {"length":1048576}');
  });

  it("gives a sandboxed Claude Code agent no shell at all, while its page tools work as its own", async () => {
    environment = await setUpE2e({ startCore: true });
    const { page } = await approvedSession(environment);
    for (const command of ["ls $PEDELEC_HOME/workspaces", "pedelec-cli --thread-id $PEDELEC_THREAD_ID tool-spec add_todo"]) {
      expect(await turn(page, `bash: ${command}`)).toMatch(/^Bash denied: .*No such tool available: Bash/);
    }
    expect(await turn(page, 'call-tool add_todo {"title":"native"}')).toMatch(/^Tool add_todo returned: \{"id":"card-1","title":"native"\}/);
    expect(await page.evaluate(() => (window as any).handlerCalls)).toEqual([{ title: "native" }]);
  });
});

describe("no agent outlives its owner", () => {
  it("stops the agent shortly after the native host dies mid-turn", async () => {
    environment = await setUpE2e({ startCore: true });
    const { page, workspace } = await approvedSession(environment);
    await page.evaluate(() => {
      const w = window as any;
      w.pendingTurn = w.send("hang");
    });
    await expect.poll(() => isPresent(join(workspace.path, ".stand-in-hanging")), { timeout: 10_000 }).toBe(true);
    const hosts = await nativeHostPidsFor(environment.home);
    expect(hosts).toHaveLength(1);
    process.kill(hosts[0]!, "SIGKILL");
    const killedAt = Date.now();
    expect(await page.evaluate(() => (window as any).pendingTurn)).toMatchObject({ ok: false, code: "NATIVE_CONNECTION_CLOSED" });
    await expect.poll(() => standInProcessesIn(environment!.home), { timeout: 15_000, interval: 100 }).toEqual([]);
    // Core gives a returning route a short grace (3 s by default) before it stops the turn.
    expect(Date.now() - killedAt).toBeGreaterThanOrEqual(2_500);
    // Core itself lives on.
    expect(await corePidOf(environment)).toBeGreaterThan(0);
    expect((await environment.pedelec("status")).code).toBe(0);
  });
});

describe("one home, whoever starts Core", () => {
  it("lets a browser with a bare environment reach the installed home's Core and its providers", async () => {
    const userHome = await mkdtemp(join(tmpdir(), "pedelec-e2e-user-"));
    scratch.push(userHome);
    // `pedelec install` ran in a terminal that had PEDELEC_HOME and the provider's folder; the browser has neither.
    environment = await setUpE2e({ browserEnv: { PATH: "/usr/bin:/bin", HOME: userHome } });
    const settings = JSON.parse(await readFile(join(environment.home, "settings.json"), "utf8"));
    expect(settings.providers.claude.path).toMatch(/stand-ins\/claude\/claude$/);

    const { page } = await approvedSession(environment);
    expect(await turn(page, "reply: hello from a bare browser")).toBe("hello from a bare browser");
    // The native host started the Core of the installed home, not a second one in the browser user's ~/.pedelec.
    expect((await environment.pedelec("status")).stdout).toContain(`PEDELEC_HOME=${environment.home}`);
    expect(await isPresent(join(userHome, ".pedelec"))).toBe(false);
  });
});
