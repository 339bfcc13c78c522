import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { listWorkspaceEntries } from "./workspace-listing.js";

let root: string;
let workspace: string;
beforeEach(async () => {
  root = await mkdtemp(path.join(tmpdir(), "pedelec-workspace-listing-"));
  workspace = path.join(root, "workspace");
  for (const file of [
    "b.txt",
    "a.md",
    "src/index.ts",
    "src/lib/util.ts",
    "src/Z.ts",
    "docs/ü.md",
    ".hidden/x",
    ".pedelec-runtime/assets/a.png",
    ".git/HEAD",
    "src/.git/config",
  ]) {
    await mkdir(path.dirname(path.join(workspace, file)), { recursive: true });
    await writeFile(path.join(workspace, file), file);
  }
  await mkdir(path.join(workspace, "empty"));
  await mkdir(path.join(root, "outside"));
  await writeFile(path.join(root, "outside", "secret.txt"), "secret");
  await symlink(path.join(root, "outside"), path.join(workspace, "linked-folder"));
  await symlink(path.join(root, "outside", "secret.txt"), path.join(workspace, "linked-file.txt"));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

describe("listWorkspaceEntries", () => {
  it("lists every regular file, recursively, sorted by code point, without symlinks, .pedelec-runtime or .git", async () => {
    expect(await listWorkspaceEntries(workspace, "files", null)).toEqual([
      ".hidden/x",
      "a.md",
      "b.txt",
      "docs/ü.md",
      "src/Z.ts",
      "src/index.ts",
      "src/lib/util.ts",
    ]);
  });

  it("lists every folder the same way, empty ones included", async () => {
    expect(await listWorkspaceEntries(workspace, "folders", null)).toEqual([".hidden", "docs", "empty", "src", "src/lib"]);
  });

  it("lists under a folder with workspace-relative paths", async () => {
    expect(await listWorkspaceEntries(workspace, "files", "src")).toEqual(["src/Z.ts", "src/index.ts", "src/lib/util.ts"]);
    expect(await listWorkspaceEntries(workspace, "folders", "src")).toEqual(["src/lib"]);
    expect(await listWorkspaceEntries(workspace, "files", "empty")).toEqual([]);
  });

  it("refuses a folder that lies through a symlink, is missing or is a file, with WORKSPACE_PATH_INVALID", async () => {
    for (const folder of ["linked-folder", "linked-folder/deeper", "missing", "a.md", "a.md/below"]) {
      await expect(listWorkspaceEntries(workspace, "files", folder)).rejects.toMatchObject({
        code: "WORKSPACE_PATH_INVALID",
        details: { path: folder },
      });
    }
  });

  it("answers WORKSPACE_LIST_TOO_LARGE instead of a shortened list, by count and by bytes", async () => {
    await expect(listWorkspaceEntries(workspace, "files", null, { maxEntries: 6, maxBytes: 1 << 20 })).rejects.toMatchObject({
      code: "WORKSPACE_LIST_TOO_LARGE",
      details: { limitEntries: 6, limitBytes: 1 << 20, path: null },
    });
    expect(await listWorkspaceEntries(workspace, "files", null, { maxEntries: 7, maxBytes: 1 << 20 })).toHaveLength(7);
    await expect(listWorkspaceEntries(workspace, "files", "src", { maxEntries: 100, maxBytes: 20 })).rejects.toMatchObject({
      code: "WORKSPACE_LIST_TOO_LARGE",
      details: { path: "src" },
    });
  });

  it("stops a walk through many more names than it may answer with", async () => {
    const crowded = path.join(workspace, "crowded");
    await mkdir(crowded);
    await Promise.all(Array.from({ length: 60 }, (_, index) => writeFile(path.join(crowded, `f${index}`), "")));
    // Only folders are asked for, and the six fit; the 60 files are still more names than the 6 × 10 the walk looks at.
    await expect(listWorkspaceEntries(workspace, "folders", null, { maxEntries: 6, maxBytes: 1 << 20 })).rejects.toMatchObject({
      code: "WORKSPACE_LIST_TOO_LARGE",
      message: expect.stringContaining("more names than a listing looks through"),
    });
  });
});
