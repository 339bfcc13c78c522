import { mkdtemp, mkdir, readdir, realpath, rm, stat, symlink, writeFile, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { prepareExplicitWorkspace, prepareManagedWorkspace, removeManagedWorkspace, sweepManagedWorkspaces } from "./workspace.js";

let base: string;
let managedRoot: string;
beforeEach(async () => {
  base = await realpath(await mkdtemp(join(tmpdir(), "pedelec-ws-")));
  managedRoot = join(base, "home", "workspaces");
});
afterEach(async () => {
  await rm(base, { recursive: true, force: true });
});

describe("workspaces", () => {
  it("creates a managed workspace with the runtime folders, private to the user", async () => {
    const workspace = await prepareManagedWorkspace(managedRoot, "thread-0001");
    expect(workspace).toEqual({ path: join(managedRoot, "thread-0001"), managed: true });
    expect((await readdir(join(workspace.path, ".pedelec-runtime"))).sort()).toEqual(["assets", "logs", "skills", "tmp"]);
    expect((await stat(workspace.path)).mode & 0o777).toBe(0o700);
  });

  it("keeps an explicit workspace's content and never deletes it", async () => {
    const project = join(base, "project");
    await mkdir(project);
    await writeFile(join(project, "notes.md"), "keep me");
    const workspace = await prepareExplicitWorkspace(project, managedRoot);
    expect(workspace.managed).toBe(false);
    await removeManagedWorkspace(managedRoot, workspace);
    expect(await readFile(join(project, "notes.md"), "utf8")).toBe("keep me");
    expect((await readdir(join(project, ".pedelec-runtime"))).length).toBe(4);
  });

  it.each([
    ["relative", () => "project"],
    ["missing", () => join(base, "nope")],
    ["a file", () => join(base, "file.txt")],
    ["inside the managed root", () => join(managedRoot, "x")],
    ["around the managed root", () => join(base, "home")],
  ])("refuses a path that is %s with WORKSPACE_PATH_INVALID", async (_label, path) => {
    await writeFile(join(base, "file.txt"), "");
    await mkdir(join(managedRoot, "x"), { recursive: true });
    await expect(prepareExplicitWorkspace(path(), managedRoot)).rejects.toMatchObject({ code: "WORKSPACE_PATH_INVALID" });
  });

  it("sees through a symlink into the managed root", async () => {
    await mkdir(join(managedRoot, "x"), { recursive: true });
    await symlink(join(managedRoot, "x"), join(base, "sneaky"));
    await expect(prepareExplicitWorkspace(join(base, "sneaky"), managedRoot)).rejects.toMatchObject({ code: "WORKSPACE_PATH_INVALID" });
  });

  it("sweeps managed workspaces left behind", async () => {
    await prepareManagedWorkspace(managedRoot, "thread-0001");
    await prepareManagedWorkspace(managedRoot, "thread-0002");
    expect(await sweepManagedWorkspaces(managedRoot)).toBe(2);
    expect(await readdir(managedRoot)).toEqual([]);
  });
});
