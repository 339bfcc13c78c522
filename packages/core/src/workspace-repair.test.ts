import { lstat, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { listAssetFiles } from "./assets/asset-listing.js";
import { resolveCorePaths } from "./core-paths.js";
import { ProcessGroupLedger } from "./process-group-ledger.js";
import { createProviderRegistry } from "./providers/provider-registry.js";
import { SessionStore } from "./session-store/session-store.js";
import { SessionManager } from "./session-manager.js";
import { loadSettings } from "./settings.js";
import { prepareExplicitWorkspace, prepareManagedWorkspace } from "./workspace.js";

const standInDir = resolve(fileURLToPath(new URL("../../../test/stand-ins/claude", import.meta.url)));
const ORIGIN = "http://127.0.0.1:4000";

let root: string;
let outside: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "pedelec-workspace-repair-"));
  outside = join(root, "outside");
  await mkdir(outside);
});
afterEach(async () => rm(root, { recursive: true, force: true }));

function manager(): SessionManager {
  const env = { ...process.env, PEDELEC_HOME: join(root, "home"), PEDELEC_PROVIDER_PATH: standInDir, CLAUDE_CONFIG_DIR: join(root, "claude") };
  const paths = resolveCorePaths(env);
  return new SessionManager({
    paths,
    loadSettings: () => loadSettings(paths.settingsFile),
    providers: createProviderRegistry(),
    env,
    processLedger: new ProcessGroupLedger(join(paths.runDir, "provider-processes")),
    scriptRunner: () => Promise.reject(new PedelecError("DENO_UNAVAILABLE", "these sessions run no scripts")),
    publish: () => undefined,
    store: SessionStore.open(paths.sessionStoreFile),
  });
}

describe(".pedelec-runtime belongs to Pedelec", () => {
  it("refuses a session in a consented folder whose .pedelec-runtime is a symlink, creating nothing at its target", async () => {
    const project = join(root, "project");
    await mkdir(project);
    await symlink(outside, join(project, ".pedelec-runtime"));
    await expect(manager().create(ORIGIN, { provider: "claude", workspace: { path: project } })).rejects.toMatchObject({
      code: "WORKSPACE_PATH_INVALID",
      message: expect.stringContaining(".pedelec-runtime is a symlink"),
    });
    expect(await readdir(outside)).toEqual([]);
  });

  it("repairs damage made from outside, so the assets of a live session list again", async () => {
    const project = join(root, "project");
    await mkdir(project);
    const workspace = await prepareExplicitWorkspace(project, {
      pedelecHome: join(root, "home"),
      workspacesDir: join(root, "home", "workspaces"),
      userHome: join(root, "user"),
    });
    const runtime = join(workspace.path, ".pedelec-runtime");
    await writeFile(join(runtime, "assets", "before.txt"), "x");
    // An agent (outside any sandbox) replaces assets with a file and logs with a link out of the workspace.
    await rm(join(runtime, "assets"), { recursive: true });
    await writeFile(join(runtime, "assets"), "not a folder");
    await rm(join(runtime, "logs"), { recursive: true });
    await symlink(outside, join(runtime, "logs"));

    await expect(listAssetFiles(workspace.path)).resolves.toEqual([]);
    expect((await lstat(join(runtime, "assets"))).isDirectory()).toBe(true);
    const movedAside = (await readdir(runtime)).filter((name) => name.startsWith("assets.damaged-"));
    expect(movedAside).toHaveLength(1);
    expect(await readFile(join(runtime, movedAside[0]!), "utf8")).toBe("not a folder");

    // The next session on the same folder repairs what is left (the logs link) and never writes through it.
    await prepareExplicitWorkspace(project, {
      pedelecHome: join(root, "home"),
      workspacesDir: join(root, "home", "workspaces"),
      userHome: join(root, "user"),
    });
    expect((await lstat(join(runtime, "logs"))).isDirectory()).toBe(true);
    expect(await readdir(outside)).toEqual([]);
  });

  it("gives a managed workspace the same folders", async () => {
    const workspace = await prepareManagedWorkspace(join(root, "home", "workspaces"), "thread-0001");
    expect((await readdir(join(workspace.path, ".pedelec-runtime"))).sort()).toEqual(["assets", "logs", "skills", "tmp"]);
  });
});
