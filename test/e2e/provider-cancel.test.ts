import { access, readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { groupAlive } from "@pedelec/core/testing/process-group";
import { approvedSession, setUpE2eWithStateFolder, type E2eEnvironment } from "./harness.js";
import { attempt } from "./page-scripts.js";

let environment: E2eEnvironment | undefined;
afterEach(async () => {
  await environment?.close();
  environment = undefined;
});

const PROVIDERS = ["claude", "codex", "opencode", "cursor", "antigravity"] as const;

describe("cancel() with every CLI provider in real Chromium", () => {
  it("stops the turn with TURN_CANCELLED and leaves no process of the agent's group", async () => {
    // The stand-ins keep their conversations under HOME, like the real CLIs; give the browser a home of its own.
    const env: NodeJS.ProcessEnv = { ...process.env };
    for (const name of ["PEDELEC_HOME", "PEDELEC_PROVIDER_PATH", "CLAUDE_CONFIG_DIR", "CODEX_HOME", "CURSOR_CONFIG_DIR", "XDG_DATA_HOME"])
      delete env[name];
    // `pedelec install` recorded every stand-in's path, and the launcher pins the home: the browser needs neither.
    environment = await setUpE2eWithStateFolder("HOME", { browserEnv: env });
    const first = await approvedSession(environment, environment.server.url, `{ provider: "${PROVIDERS[0]}" }`);
    const page = first.page;
    for (const provider of PROVIDERS) {
      const workspace =
        provider === PROVIDERS[0]
          ? first.workspace.path
          : await attempt<{ workspace: { path: string } }>(page, `return await window.create({ provider: "${provider}" });`).then((created) => {
              if (!created.ok) throw new Error(`${provider}: createSession failed: ${created.code} ${created.message}`);
              return created.value.workspace.path;
            });
      await page.evaluate(() => {
        const w = window as any;
        w.pendingTurn = w.send("hang");
      });
      const marker = join(workspace, ".stand-in-hanging");
      await expect
        .poll(
          () =>
            access(marker).then(
              () => true,
              () => false,
            ),
          { timeout: 15_000 },
        )
        .toBe(true);
      const agent = Number(await readFile(marker, "utf8"));
      expect(groupAlive(agent)).toBe(true);

      await page.evaluate(() => (window as any).session.cancel());
      expect(await page.evaluate(() => (window as any).pendingTurn), provider).toMatchObject({ ok: false, code: "TURN_CANCELLED" });
      // cancel() resolves only once the agent's process group is gone: nothing left to wait for.
      expect(groupAlive(agent), provider).toBe(false);
      expect(await page.evaluate(() => (window as any).session.getStatus()), provider).toBe("idle");
    }
  });
});
