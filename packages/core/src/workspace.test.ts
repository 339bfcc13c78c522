import { mkdtemp, mkdir, readdir, realpath, rm, stat, symlink, writeFile, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { prepareExplicitWorkspace, prepareManagedWorkspace, removeManagedWorkspace, sweepManagedWorkspaces } from "./workspace.js";

let base: string;
let managedRoot: string;
let pedelecHome: string;
let userHome: string;
const roots = () => ({ pedelecHome, workspacesDir: managedRoot, userHome });
beforeEach(async () => {
  base = await realpath(await mkdtemp(join(tmpdir(), "pedelec-ws-")));
  pedelecHome = join(base, "home");
  managedRoot = join(pedelecHome, "workspaces");
  userHome = join(base, "user");
  await mkdir(managedRoot, { recursive: true });
  await mkdir(userHome);
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
    const workspace = await prepareExplicitWorkspace(project, roots());
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
    await expect(prepareExplicitWorkspace(path(), roots())).rejects.toMatchObject({ code: "WORKSPACE_PATH_INVALID" });
  });

  it.each([
    ["the root folder", () => "/"],
    ["/etc", () => "/etc"],
    ["a folder inside /usr", () => "/usr/share"],
    ["/tmp itself", () => "/tmp"],
    ["the user's home folder itself", () => userHome],
    ["PEDELEC_HOME", () => pedelecHome],
    ["a folder inside PEDELEC_HOME", () => join(pedelecHome, "keys")],
    ["a folder around PEDELEC_HOME", () => base],
  ])("refuses %s outright, before creating anything in it", async (_label, path) => {
    await mkdir(join(pedelecHome, "keys"), { recursive: true });
    const error = await prepareExplicitWorkspace(path(), roots()).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: "WORKSPACE_PATH_INVALID", message: expect.stringMatching(/refused|overlaps/) });
    await expect(stat(join(path(), ".pedelec-runtime"))).rejects.toMatchObject({ code: "ENOENT" });
  });

  it("sees through a symlink to a system folder", async () => {
    await symlink("/etc", join(base, "innocent-looking"));
    await expect(prepareExplicitWorkspace(join(base, "innocent-looking"), roots())).rejects.toMatchObject({
      code: "WORKSPACE_PATH_INVALID",
      message: expect.stringContaining("system folder"),
    });
  });

  it("accepts a project folder inside the user's home", async () => {
    const project = join(userHome, "projects", "board");
    await mkdir(project, { recursive: true });
    await expect(prepareExplicitWorkspace(project, roots())).resolves.toEqual({ path: project, managed: false });
  });

  it("sees through a symlink into the managed root", async () => {
    await mkdir(join(managedRoot, "x"), { recursive: true });
    await symlink(join(managedRoot, "x"), join(base, "sneaky"));
    await expect(prepareExplicitWorkspace(join(base, "sneaky"), roots())).rejects.toMatchObject({ code: "WORKSPACE_PATH_INVALID" });
  });

  it("sweeps managed workspaces left behind", async () => {
    await prepareManagedWorkspace(managedRoot, "thread-0001");
    await prepareManagedWorkspace(managedRoot, "thread-0002");
    expect(await sweepManagedWorkspaces(managedRoot)).toBe(2);
    expect(await readdir(managedRoot)).toEqual([]);
  });
});
