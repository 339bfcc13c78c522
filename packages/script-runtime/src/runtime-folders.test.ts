import { lstat, mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ensureRuntimeFolders, type RuntimeFolderRepair } from "./runtime-folders.js";

describe("ensureRuntimeFolders", () => {
  let root: string;
  let ws: string;
  let outside: string;
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), "pedelec-runtime-folders-"));
    ws = join(root, "ws");
    outside = join(root, "outside");
    await mkdir(ws);
    await mkdir(outside);
  });
  afterEach(async () => rm(root, { recursive: true, force: true }));

  it("creates the four folders, private to the user", async () => {
    const runtime = await ensureRuntimeFolders(ws);
    expect(runtime).toBe(join(ws, ".pedelec-runtime"));
    expect((await readdir(runtime)).sort()).toEqual(["assets", "logs", "skills", "tmp"]);
    for (const name of ["", "assets", "logs", "skills", "tmp"]) expect((await stat(join(runtime, name))).mode & 0o777).toBe(0o700);
  });

  it("refuses a .pedelec-runtime symlinked outside, creating nothing at its target", async () => {
    await symlink(outside, join(ws, ".pedelec-runtime"));
    await expect(ensureRuntimeFolders(ws)).rejects.toMatchObject({
      code: "WORKSPACE_PATH_INVALID",
      message: expect.stringContaining("is a symlink"),
    });
    expect(await readdir(outside)).toEqual([]);
    expect((await lstat(join(ws, ".pedelec-runtime"))).isSymbolicLink()).toBe(true);
  });

  it("refuses a .pedelec-runtime that is a file, and leaves the file alone", async () => {
    await writeFile(join(ws, ".pedelec-runtime"), "mine");
    await expect(ensureRuntimeFolders(ws)).rejects.toMatchObject({
      code: "WORKSPACE_PATH_INVALID",
      message: expect.stringContaining("not a folder"),
    });
    expect(await readFile(join(ws, ".pedelec-runtime"), "utf8")).toBe("mine");
  });

  it("repairs damaged sub-folders: a symlink is removed unfollowed, a file is moved aside", async () => {
    const runtime = await ensureRuntimeFolders(ws);
    await writeFile(join(outside, "keep.txt"), "outside");
    await rm(join(runtime, "logs"), { recursive: true });
    await symlink(outside, join(runtime, "logs"));
    await rm(join(runtime, "assets"), { recursive: true });
    await writeFile(join(runtime, "assets"), "a script's file");
    await rm(join(runtime, "tmp"), { recursive: true });
    await symlink(join(outside, "missing"), join(runtime, "tmp"));

    const repairs: RuntimeFolderRepair[] = [];
    await ensureRuntimeFolders(ws, (repair) => repairs.push(repair));
    for (const name of ["assets", "logs", "skills", "tmp"]) expect((await lstat(join(runtime, name))).isDirectory()).toBe(true);
    expect(await readdir(outside)).toEqual(["keep.txt"]);
    expect(repairs.map(({ folder, found, action }) => [folder, found, action])).toEqual([
      [join(runtime, "assets"), "file", "moved-aside"],
      [join(runtime, "logs"), "symlink", "removed"],
      [join(runtime, "tmp"), "symlink", "removed"],
    ]);
    const movedTo = repairs[0]!.movedTo!;
    expect(movedTo).toMatch(/\/assets\.damaged-\d{8}T\d{9}Z-[0-9a-f]{8}$/);
    expect(await readFile(movedTo, "utf8")).toBe("a script's file");
    // Healthy folders are left as they are.
    await writeFile(join(runtime, "assets", "photo.png"), "png");
    await ensureRuntimeFolders(ws, (repair) => repairs.push(repair));
    expect(repairs).toHaveLength(3);
    expect(await readFile(join(runtime, "assets", "photo.png"), "utf8")).toBe("png");
  });

  it("works from a symlinked path to the workspace, answering with the real one", async () => {
    await symlink(ws, join(root, "ws-link"));
    await expect(ensureRuntimeFolders(join(root, "ws-link"))).resolves.toBe(join(ws, ".pedelec-runtime"));
  });
});
