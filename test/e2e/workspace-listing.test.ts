import { mkdir, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { approvedSession, setUpE2e, type E2eEnvironment } from "./harness.js";
import { attempt, logOf } from "./page-scripts.js";

let environment: E2eEnvironment | undefined;

afterEach(async () => {
  await environment?.close();
  environment = undefined;
});

describe("workspace listings in real Chromium", () => {
  it("lists the files and folders the agent wrote, under a folder too, and refuses paths out of the workspace", async () => {
    environment = await setUpE2e({ startCore: true });
    const { page, workspace } = await approvedSession(environment);
    await writeFile(join(workspace.path, "README.md"), "# Board\n");
    await mkdir(join(environment.home, "elsewhere"), { recursive: true });
    await symlink(join(environment.home, "elsewhere"), join(workspace.path, "linked"));

    // The agent writes a file with its script runner, as it would during a turn.
    const source = 'Deno.mkdirSync("notes/2026", { recursive: true }); Deno.writeTextFileSync("notes/2026/today.md", "milk"); console.log("ok");';
    await attempt(page, `return await window.send(${JSON.stringify(`call-tool run_script ${JSON.stringify({ source })}`)});`);
    expect((await logOf(page)).filter((entry) => entry.kind === "chat").at(-1)?.text).toMatch(/^Tool run_script returned: .*"stdout":"ok\\n"/);

    expect(await attempt(page, "return await window.session.workspace.listFiles();")).toEqual({
      ok: true,
      value: ["README.md", "notes/2026/today.md"],
    });
    expect(await attempt(page, "return await window.session.workspace.listFolders();")).toEqual({ ok: true, value: ["notes", "notes/2026"] });
    expect(await attempt(page, 'return await window.session.workspace.listFiles("notes");')).toEqual({ ok: true, value: ["notes/2026/today.md"] });
    // Checked in the page before anything is sent, and in Core for what only the disk can say.
    for (const path of ["../", "/etc", "notes/../..", ".pedelec-runtime"]) {
      expect(await attempt(page, `return await window.session.workspace.listFiles(${JSON.stringify(path)});`)).toMatchObject({
        ok: false,
        code: "INVALID_INPUT",
      });
    }
    for (const path of ["linked", "missing", "README.md"]) {
      expect(await attempt(page, `return await window.session.workspace.listFolders(${JSON.stringify(path)});`)).toMatchObject({
        ok: false,
        code: "WORKSPACE_PATH_INVALID",
      });
    }

    await page.evaluate(() => (window as unknown as { session: { end(): Promise<void> } }).session.end());
    expect(await attempt(page, "return await window.session.workspace.listFiles();")).toMatchObject({ ok: false, code: "SESSION_ENDED" });
  });
});
