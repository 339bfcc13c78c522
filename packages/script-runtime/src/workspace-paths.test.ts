import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isInside, resolveWorkspaceFile, resolveWorkspaceRoot } from "./workspace-paths.js";

describe("workspace paths", () => {
  let root: string;
  let ws: string;
  const entry = (path: string) => resolveWorkspaceFile(ws, path, "entry", "DENO_ENTRY_INVALID");

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), "pedelec-paths-"));
    ws = join(root, "ws");
    await mkdir(join(ws, "src"), { recursive: true });
    await writeFile(join(ws, "main.ts"), "");
    await writeFile(join(ws, "src", "lib.ts"), "");
    await mkdir(join(root, "outside"));
    await writeFile(join(root, "outside", "x.ts"), "");
    await symlink(join(root, "outside", "x.ts"), join(ws, "out-link.ts"));
    await symlink(join(ws, "main.ts"), join(ws, "in-link.ts"));
    await symlink(join(ws, "src"), join(ws, "src-link"));
    await symlink(join(root, "ws"), join(root, "ws-link"));
  });
  afterAll(async () => rm(root, { recursive: true, force: true }));

  it("isInside compares whole path segments", () => {
    expect(isInside("/a/b", "/a/b")).toBe(true);
    expect(isInside("/a/b", "/a/b/c")).toBe(true);
    expect(isInside("/a/b", "/a/bc")).toBe(false);
    expect(isInside("/a/b", "/a")).toBe(false);
    expect(isInside("/a/b", "/a/b/../c")).toBe(false);
    expect(isInside("/a/b", "/a/b/..x")).toBe(true);
  });

  it("resolves the workspace root to its real path", async () => {
    await expect(resolveWorkspaceRoot(join(root, "ws-link"))).resolves.toBe(ws);
    await expect(resolveWorkspaceRoot("relative/ws")).rejects.toMatchObject({ code: "WORKSPACE_PATH_INVALID" });
    await expect(resolveWorkspaceRoot(join(root, "missing"))).rejects.toMatchObject({ code: "WORKSPACE_PATH_INVALID" });
    await expect(resolveWorkspaceRoot(join(ws, "main.ts"))).rejects.toMatchObject({ code: "WORKSPACE_PATH_INVALID" });
  });

  it("accepts workspace files, also through .. that stays inside", async () => {
    await expect(entry("main.ts")).resolves.toBe(join(ws, "main.ts"));
    await expect(entry("src/lib.ts")).resolves.toBe(join(ws, "src", "lib.ts"));
    await expect(entry("./src/../main.ts")).resolves.toBe(join(ws, "main.ts"));
  });

  it.each([
    ["", /is empty/],
    ["main.ts\0", /NUL/],
    ["/etc/passwd", /not absolute/],
    ["C:\\x.ts", /not absolute/],
    ["\\\\server\\share\\x.ts", /not absolute/],
    ["file:///etc/passwd", /not a URL/],
    ["https://example.com/x.ts", /not a URL/],
    ["data:text/javascript,1", /not a URL/],
    ["../outside/x.ts", /leaves the workspace/],
    ["src/../../outside/x.ts", /leaves the workspace/],
    ["..", /leaves the workspace/],
    ["missing.ts", /does not exist/],
    ["src", /not a regular file/],
    [".", /not a regular file/],
    ["out-link.ts", /resolves outside the workspace through a symlink/],
    ["in-link.ts", /goes through a symlink/],
    ["src-link/lib.ts", /goes through a symlink/],
  ])("refuses the entry %j", async (path, message) => {
    await expect(entry(path)).rejects.toMatchObject({ code: "DENO_ENTRY_INVALID", message: expect.stringMatching(message) });
  });

  it("uses the caller's code for import maps", async () => {
    await expect(resolveWorkspaceFile(ws, "../x.json", "import map", "DENO_IMPORT_MAP_INVALID")).rejects.toMatchObject({
      code: "DENO_IMPORT_MAP_INVALID",
      message: expect.stringContaining("import map"),
    });
  });
});
