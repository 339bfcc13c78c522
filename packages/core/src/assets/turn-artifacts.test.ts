import { mkdir, mkdtemp, readdir, rm, symlink, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MAX_ARTIFACTS_PER_TURN } from "@pedelec/protocol/artifacts";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { artifactsSince, assetSnapshot } from "./turn-artifacts.js";

let workspace: string;
let assets: string;
beforeEach(async () => {
  workspace = await mkdtemp(join(tmpdir(), "pedelec-artifacts-"));
  assets = join(workspace, ".pedelec-runtime", "assets");
  await mkdir(assets, { recursive: true });
});
afterEach(async () => {
  await rm(workspace, { recursive: true, force: true });
});

describe("turn artifacts", () => {
  it("reports the files a turn added or changed, in path order, with their kind and media type, and nothing else", async () => {
    await writeFile(join(assets, "kept.txt"), "same");
    await writeFile(join(assets, "grown.md"), "v1");
    await writeFile(join(assets, "gone.csv"), "a,b");
    const before = await assetSnapshot(workspace);

    await writeFile(join(assets, "grown.md"), "version two");
    await rm(join(assets, "gone.csv"));
    await mkdir(join(assets, "charts"));
    await writeFile(join(assets, "charts", "sales.png"), Buffer.alloc(64));
    await writeFile(join(assets, "data.json"), "{}");
    await writeFile(join(assets, "archive.bin"), Buffer.alloc(3));
    // Neither a link nor Pedelec's own temporary names are artifacts.
    await symlink(join(assets, "kept.txt"), join(assets, "link.txt"));
    await writeFile(join(assets, ".pedelec-upload-1"), "partial");

    const { artifacts, more } = await artifactsSince(workspace, before);
    expect(more).toBe(0);
    expect(artifacts.map(({ modifiedAt: _modifiedAt, ...rest }) => rest)).toEqual([
      { path: "/archive.bin", kind: "file", sizeBytes: 3, mediaType: "application/octet-stream" },
      { path: "/charts/sales.png", kind: "image", sizeBytes: 64, mediaType: "image/png" },
      { path: "/data.json", kind: "text", sizeBytes: 2, mediaType: "application/json" },
      { path: "/grown.md", kind: "text", sizeBytes: 11, mediaType: "text/markdown" },
    ]);
  });

  it("counts a file rewritten with the same size as changed by its modification time", async () => {
    await writeFile(join(assets, "note.txt"), "aaaa");
    await utimes(join(assets, "note.txt"), new Date(1_000_000), new Date(1_000_000));
    const before = await assetSnapshot(workspace);
    await writeFile(join(assets, "note.txt"), "bbbb");
    expect((await artifactsSince(workspace, before)).artifacts.map((artifact) => artifact.path)).toEqual(["/note.txt"]);
    expect((await artifactsSince(workspace, await assetSnapshot(workspace))).artifacts).toEqual([]);
  });

  it("neither creates nor repairs Pedelec's folders in a workspace that lacks them", async () => {
    const bare = await mkdtemp(join(tmpdir(), "pedelec-artifacts-bare-"));
    try {
      const before = await assetSnapshot(bare);
      expect(before.size).toBe(0);
      expect(await artifactsSince(bare, before)).toEqual({ artifacts: [], more: 0 });
      expect(await readdir(bare)).toEqual([]);
    } finally {
      await rm(bare, { recursive: true, force: true });
    }
  });

  it("reports at most MAX_ARTIFACTS_PER_TURN and counts the rest", async () => {
    const before = await assetSnapshot(workspace);
    const count = MAX_ARTIFACTS_PER_TURN + 7;
    await Promise.all(Array.from({ length: count }, (_, index) => writeFile(join(assets, `f${String(index).padStart(4, "0")}.txt`), "x")));
    const { artifacts, more } = await artifactsSince(workspace, before);
    expect(artifacts).toHaveLength(MAX_ARTIFACTS_PER_TURN);
    expect(artifacts[0]?.path).toBe("/f0000.txt");
    expect(more).toBe(7);
  });
});
