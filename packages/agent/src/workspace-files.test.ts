import { mkdir, mkdtemp, readFile, realpath, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { MAX_LIST_ENTRIES, MAX_READ_FILE_BYTES, listWorkspaceFiles, readWorkspaceFile, writeWorkspaceFile } from "./workspace-files.js";
import { confinePath } from "./workspace-paths.js";

let root: string;
let workspace: string;
let outside: string;

beforeEach(async () => {
  root = await realpath(await mkdtemp(join(tmpdir(), "pedelec-agent-paths-")));
  workspace = join(root, "workspace");
  outside = join(root, "outside");
  await mkdir(join(workspace, "docs"), { recursive: true });
  await mkdir(outside);
  await writeFile(join(workspace, "docs", "readme.md"), "inside\n");
  await writeFile(join(outside, "secret.txt"), "outside secret\n");
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

const refused = { code: "WORKSPACE_PATH_INVALID" };

describe("confinePath", () => {
  it("resolves workspace-relative paths, existing or not", async () => {
    await expect(confinePath(workspace, "docs/readme.md")).resolves.toEqual({
      real: join(workspace, "docs/readme.md"),
      relative: "docs/readme.md",
      exists: true,
    });
    await expect(confinePath(workspace, "./docs/../new/file.txt")).resolves.toEqual({
      real: join(workspace, "new/file.txt"),
      relative: "new/file.txt",
      exists: false,
    });
    await expect(confinePath(workspace, ".")).resolves.toMatchObject({ relative: ".", exists: true });
  });

  it("refuses absolute paths, .. that leaves the workspace, and NUL", async () => {
    await expect(confinePath(workspace, join(outside, "secret.txt"))).rejects.toMatchObject({
      ...refused,
      message: expect.stringContaining("absolute"),
    });
    await expect(confinePath(workspace, "/etc/passwd")).rejects.toMatchObject(refused);
    await expect(confinePath(workspace, "../outside/secret.txt")).rejects.toMatchObject({
      ...refused,
      message: expect.stringContaining("leaves the workspace"),
    });
    await expect(confinePath(workspace, "docs/../../outside")).rejects.toMatchObject(refused);
    await expect(confinePath(workspace, "docs/readme.md\0.png")).rejects.toMatchObject({ ...refused, message: expect.stringContaining("NUL") });
  });

  it("refuses symlinks that lead out, whether to the file itself or to a folder on the way, and dangling ones", async () => {
    await symlink(join(outside, "secret.txt"), join(workspace, "link-to-file"));
    await symlink(outside, join(workspace, "link-to-folder"));
    await symlink(join(outside, "nothing-here"), join(workspace, "dangling"));
    await expect(confinePath(workspace, "link-to-file")).rejects.toMatchObject({
      ...refused,
      message: expect.stringContaining("outside the workspace"),
    });
    await expect(confinePath(workspace, "link-to-folder/secret.txt")).rejects.toMatchObject(refused);
    // A file that does not exist yet, under a link that leads out: still out.
    await expect(confinePath(workspace, "link-to-folder/new/file.txt")).rejects.toMatchObject(refused);
    await expect(confinePath(workspace, "dangling")).rejects.toMatchObject({ ...refused, message: expect.stringContaining("points nowhere") });
  });

  it("allows a symlink that stays inside, and names the path where it really is", async () => {
    await symlink(join(workspace, "docs"), join(workspace, "docs-link"));
    await expect(confinePath(workspace, "docs-link/readme.md")).resolves.toMatchObject({ relative: "docs/readme.md", exists: true });
  });

  it("hides .pedelec-runtime except its assets", async () => {
    await mkdir(join(workspace, ".pedelec-runtime", "assets"), { recursive: true });
    await mkdir(join(workspace, ".pedelec-runtime", "logs"), { recursive: true });
    await expect(confinePath(workspace, ".pedelec-runtime/logs/turn.log")).rejects.toMatchObject(refused);
    await expect(confinePath(workspace, ".pedelec-runtime/skills")).rejects.toMatchObject(refused);
    await expect(confinePath(workspace, ".pedelec-runtime/assets/photo.png")).resolves.toMatchObject({
      relative: ".pedelec-runtime/assets/photo.png",
    });
    // Not through an inside link either.
    await symlink(join(workspace, ".pedelec-runtime", "logs"), join(workspace, "logs-link"));
    await expect(confinePath(workspace, "logs-link/turn.log")).rejects.toMatchObject(refused);
  });
});

describe("the workspace file tools", () => {
  it("lists breadth-first, skipping symlinks and the runtime folder's internals", async () => {
    await symlink(outside, join(workspace, "link-to-folder"));
    await mkdir(join(workspace, ".pedelec-runtime", "assets"), { recursive: true });
    await mkdir(join(workspace, ".pedelec-runtime", "tmp"), { recursive: true });
    const listing = await listWorkspaceFiles(workspace, ".", 3);
    expect(listing).toEqual({
      path: ".",
      truncated: false,
      entries: [
        { path: ".pedelec-runtime", type: "directory" },
        { path: "docs", type: "directory" },
        { path: ".pedelec-runtime/assets", type: "directory" },
        { path: "docs/readme.md", type: "file", sizeBytes: 7 },
      ],
    });
    await expect(listWorkspaceFiles(workspace, "link-to-folder")).rejects.toMatchObject(refused);
  });

  it(`caps a listing at ${MAX_LIST_ENTRIES} entries`, async () => {
    await Promise.all(
      Array.from({ length: MAX_LIST_ENTRIES + 20 }, (_, index) => writeFile(join(workspace, `file-${String(index).padStart(4, "0")}.txt`), "")),
    );
    const listing = await listWorkspaceFiles(workspace);
    expect(listing.entries).toHaveLength(MAX_LIST_ENTRIES);
    expect(listing.truncated).toBe(true);
  });

  it("reads UTF-8 text, and refuses binary files, large files and missing ones with a clear error", async () => {
    await expect(readWorkspaceFile(workspace, "docs/readme.md")).resolves.toEqual({ path: "docs/readme.md", content: "inside\n", sizeBytes: 7 });
    await writeFile(join(workspace, "image.png"), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x1a]));
    await expect(readWorkspaceFile(workspace, "image.png")).rejects.toMatchObject({ code: "ASSET_TEXT_DECODE_FAILED" });
    await writeFile(join(workspace, "latin1.txt"), Buffer.from([0x63, 0x61, 0x66, 0xe9]));
    await expect(readWorkspaceFile(workspace, "latin1.txt")).rejects.toMatchObject({ code: "ASSET_TEXT_DECODE_FAILED" });
    await writeFile(join(workspace, "big.txt"), "x".repeat(MAX_READ_FILE_BYTES + 1));
    await expect(readWorkspaceFile(workspace, "big.txt")).rejects.toMatchObject({
      code: "ASSET_READ_TOO_LARGE",
      message: expect.stringContaining("run_script"),
    });
    await writeFile(join(workspace, "just-fits.txt"), "y".repeat(MAX_READ_FILE_BYTES));
    await expect(readWorkspaceFile(workspace, "just-fits.txt")).resolves.toMatchObject({ sizeBytes: MAX_READ_FILE_BYTES });
    await expect(readWorkspaceFile(workspace, "missing.txt")).rejects.toMatchObject({ code: "ASSET_NOT_FOUND" });
    await expect(readWorkspaceFile(workspace, "docs")).rejects.toMatchObject({ code: "ASSET_NOT_FILE" });
    await symlink(join(outside, "secret.txt"), join(workspace, "secret-link"));
    await expect(readWorkspaceFile(workspace, "secret-link")).rejects.toMatchObject(refused);
  });

  it("writes files, creating their folders, and never through a link that leads out", async () => {
    await expect(writeWorkspaceFile(workspace, "a/b/c.txt", "deep")).resolves.toEqual({ path: "a/b/c.txt", bytesWritten: 4, created: true });
    expect(await readFile(join(workspace, "a/b/c.txt"), "utf8")).toBe("deep");
    await expect(writeWorkspaceFile(workspace, "a/b/c.txt", "again")).resolves.toMatchObject({ created: false });
    await symlink(join(outside, "secret.txt"), join(workspace, "secret-link"));
    await symlink(outside, join(workspace, "out-folder"));
    await expect(writeWorkspaceFile(workspace, "secret-link", "overwritten")).rejects.toMatchObject(refused);
    await expect(writeWorkspaceFile(workspace, "out-folder/new.txt", "planted")).rejects.toMatchObject(refused);
    await expect(writeWorkspaceFile(workspace, "../outside/new.txt", "planted")).rejects.toMatchObject(refused);
    await expect(writeWorkspaceFile(workspace, "/tmp/planted.txt", "planted")).rejects.toMatchObject(refused);
    await expect(writeWorkspaceFile(workspace, "docs", "not a folder")).rejects.toMatchObject({ code: "ASSET_NOT_FILE" });
    await expect(writeWorkspaceFile(workspace, ".pedelec-runtime/logs/x.log", "no")).rejects.toMatchObject(refused);
    expect(await readFile(join(outside, "secret.txt"), "utf8")).toBe("outside secret\n");
  });
});
