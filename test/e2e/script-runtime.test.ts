import { readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Page } from "playwright-core";
import { approvedSession, corePidOf, grantFullAccess, setUpE2e, setUpE2eWithStateFolder, type E2eEnvironment } from "./harness.js";
import { attempt, logOf } from "./page-scripts.js";
import { processAlive } from "@pedelec/core/testing/process-group";

let environment: E2eEnvironment | undefined;

afterEach(async () => {
  await environment?.close();
  environment = undefined;
});

/** Starts a Full Access run in the page that records its pid in the workspace and waits a minute; returns that pid. */
async function startLongFullAccessRun(page: Page, workspacePath: string): Promise<number> {
  await page.evaluate((source) => {
    const w = window as unknown as Record<string, any>;
    w.longRun = w.session.workspace.run({ source, access: "full" }).then(
      (value: unknown) => ({ ok: true, value }),
      (error: any) => ({ ok: false, code: error.code, message: error.message }),
    );
  }, 'Deno.writeTextFileSync("long-run.pid", String(Deno.pid));\nawait new Promise((r) => setTimeout(r, 60_000));\n');
  const pidFile = join(workspacePath, "long-run.pid");
  await expect.poll(() => readFile(pidFile, "utf8").catch(() => ""), { timeout: 15_000 }).not.toBe("");
  const pid = Number(await readFile(pidFile, "utf8"));
  expect(processAlive(pid)).toBe(true);
  return pid;
}

/** `workspace.run(options)` inside the page, as its result or its error code. */
function runInPage(options: Record<string, unknown>) {
  return `return await window.session.workspace.run(${JSON.stringify(options)});`;
}

describe("scripts in real Chromium", () => {
  it("lets the agent run a script with its run_script tool inside a turn, and refuses an entry outside the workspace", async () => {
    environment = await setUpE2eWithStateFolder("CURSOR_CONFIG_DIR", { startCore: true });
    const { page, sessionId, workspace } = await approvedSession(environment);
    await writeFile(
      join(workspace.path, "sum.ts"),
      'import { threadId } from "pedelec:workspace";\nconsole.log(Number(Deno.args[0]) + Number(Deno.args[1]), threadId === Deno.args[2]);\n',
    );

    const call = `call-tool run_script ${JSON.stringify({ entry: "sum.ts", args: ["2", "3", sessionId] })}`;
    expect(await attempt(page, `return await window.send(${JSON.stringify(call)});`)).toEqual({ ok: true, value: { ok: true } });
    const chats = async () => (await logOf(page)).filter((entry) => entry.kind === "chat").map((entry) => String(entry.text));
    expect((await chats()).at(-1)).toMatch(/^Tool run_script returned: .*"exitCode":0.*"stdout":"5 true\\n"/);
    // The run left its log in the workspace.
    expect((await readdir(join(workspace.path, ".pedelec-runtime", "logs"))).some((name) => name.startsWith("run-"))).toBe(true);

    const outside = `call-tool run_script ${JSON.stringify({ entry: "../../../etc/passwd" })}`;
    await attempt(page, `return await window.send(${JSON.stringify(outside)});`);
    expect((await chats()).at(-1)).toMatch(/^Tool run_script failed: .*"code":"DENO_ENTRY_INVALID"/s);

    // An agent with a shell runs the same runner from its PATH.
    const shell = await approvedSession(environment, environment.otherOriginUrl, '{ provider: "cursor" }');
    await attempt(
      shell.page,
      `return await window.send(${JSON.stringify(`bash: pedelec-ts-runtime --thread-id ${shell.sessionId} run ../../../etc/passwd`)});`,
    );
    const shellChats = (await logOf(shell.page)).filter((entry) => entry.kind === "chat").map((entry) => String(entry.text));
    expect(shellChats.at(-1)).toMatch(/^Shell exit 125: .*"code":"DENO_ENTRY_INVALID"/s);
  });

  it("runs a page's script in the sandbox; Full Access is granted in the options page, used, revoked mid-run and refused after", async () => {
    environment = await setUpE2e({ startCore: true });
    const { page, workspace } = await approvedSession(environment);
    const origin = new URL(environment.server.url).origin;

    const sandboxed = await attempt<Record<string, unknown>>(page, runInPage({ source: "console.log(1 + 1);" }));
    expect(sandboxed).toMatchObject({ ok: true, value: { exitCode: 0, stdout: "2\n", access: "sandbox", timedOut: false } });
    expect(sandboxed.ok && (sandboxed.value.walls as string[])).toContain("bubblewrap");
    const outside = await attempt<Record<string, unknown>>(page, runInPage({ source: 'Deno.readTextFileSync("/etc/hostname");' }));
    expect(outside).toMatchObject({ ok: true, value: { exitCode: 1, stderr: expect.stringContaining("NotCapable") } });
    expect(await attempt(page, runInPage({ source: "console.log(1);", access: "full" }))).toMatchObject({
      ok: false,
      code: "FULL_ACCESS_NOT_GRANTED",
    });

    // The user grants Full Access: the first button only asks; the confirmation grants.
    const row = await grantFullAccess(environment, origin);

    const full = await attempt<Record<string, unknown>>(page, runInPage({ source: 'console.log(Deno.env.get("PEDELEC_HOME"));', access: "full" }));
    expect(full).toMatchObject({ ok: true, value: { exitCode: 0, stdout: `${environment.home}\n`, access: "full", walls: [] } });

    // A long Full Access run, then the user revokes: the run dies at once.
    const pid = await startLongFullAccessRun(page, workspace.path);
    await row.locator('[data-action="revoke-full-access"]').click();
    const longRun = await page.evaluate(() => (window as unknown as Record<string, Promise<unknown>>).longRun);
    expect(longRun).toMatchObject({ ok: false, code: "DENO_CANCELLED", message: expect.stringContaining("revoked") });
    await expect.poll(() => processAlive(pid), { timeout: 5_000 }).toBe(false);
    await row.locator('[data-action="grant-full-access"]').waitFor({ timeout: 10_000 });

    expect(await attempt(page, runInPage({ source: "console.log(1);", access: "full" }))).toMatchObject({
      ok: false,
      code: "FULL_ACCESS_NOT_GRANTED",
    });
    // Sandboxed runs go on as before.
    expect(await attempt(page, runInPage({ source: "console.log(3);" }))).toMatchObject({ ok: true, value: { stdout: "3\n" } });
  });

  it("does not let a Full Access run outlive a Core that was killed", async () => {
    environment = await setUpE2e({ startCore: true });
    const { page, workspace } = await approvedSession(environment);
    await grantFullAccess(environment, new URL(environment.server.url).origin);
    const pid = await startLongFullAccessRun(page, workspace.path);
    process.kill(await corePidOf(environment), "SIGKILL");
    // Core's watchdog kills the run's process group; no new Core is needed.
    await expect.poll(() => processAlive(pid), { timeout: 10_000, interval: 50 }).toBe(false);
    expect(await page.evaluate(() => (window as unknown as Record<string, Promise<unknown>>).longRun)).toMatchObject({ ok: false });
  });
});
