import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { DEFAULT_RESOURCE_LIMITS, type ResourceLimits } from "@pedelec/protocol/resource-limits";
import { AssetQuota, assetBytesIn, type UploadClaim } from "./asset-quota.js";

const MIB = 1024 * 1024;
const ORIGIN = "https://app.example";

const folders: string[] = [];
afterEach(async () => {
  for (const folder of folders.splice(0)) await rm(folder, { recursive: true, force: true });
});

/** A workspace whose assets folder holds files of the given sizes (bytes), by asset path. */
async function workspace(files: Record<string, number> = {}): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), "pedelec-quota-"));
  folders.push(root);
  const assets = join(root, ".pedelec-runtime", "assets");
  await mkdir(assets, { recursive: true });
  for (const [path, size] of Object.entries(files)) {
    await mkdir(join(assets, path, ".."), { recursive: true });
    await writeFile(join(assets, path), Buffer.alloc(size));
  }
  return root;
}

function quota(limits: Partial<ResourceLimits>, workspacesOf: () => string[] = () => [], free = 100 * 1024 * MIB): AssetQuota {
  return new AssetQuota({ limits: async () => ({ ...DEFAULT_RESOURCE_LIMITS, ...limits }), workspacesOf }, async () => free);
}

function claim(workspacePath: string, bytes: number, sessionId = "s1", path = "/new.bin"): UploadClaim {
  return { sessionId, origin: ORIGIN, workspacePath, targetPath: join(workspacePath, ".pedelec-runtime", "assets", path), bytes };
}

describe("the assets a session and an origin hold", () => {
  it("counts regular files at every depth, but neither symlinks nor Pedelec's temporary uploads", async () => {
    const root = await workspace({ "/a.bin": 3 * MIB, "/deep/er/b.bin": MIB, "/.pedelec-upload-1234": 5 * MIB });
    const outside = await workspace({ "/big.bin": 8 * MIB });
    await symlink(join(outside, ".pedelec-runtime", "assets"), join(root, ".pedelec-runtime", "assets", "link"));
    await symlink(join(outside, ".pedelec-runtime", "assets", "big.bin"), join(root, ".pedelec-runtime", "assets", "file-link"));
    expect(await assetBytesIn(root)).toBe(4 * MIB);
    expect(await assetBytesIn(join(root, "missing"))).toBe(0);
  });

  it("refuses an upload past the session's quota with the limit, the bytes used and the setting", async () => {
    const root = await workspace({ "/a.bin": 3 * MIB });
    const limits = quota({ assetBytesPerSession: 4 * MIB });
    await expect(limits.check(claim(root, MIB))).resolves.toBeUndefined();
    await expect(limits.check(claim(root, MIB + 1))).rejects.toMatchObject({
      code: "ASSET_QUOTA_EXCEEDED",
      details: { scope: "session", limit: 4 * MIB, used: 3 * MIB, requested: MIB + 1, setting: "limits.assetBytesPerSession" },
    });
  });

  it("does not count the file an upload replaces", async () => {
    const root = await workspace({ "/a.bin": 3 * MIB });
    await expect(quota({ assetBytesPerSession: 4 * MIB }).check(claim(root, 4 * MIB, "s1", "/a.bin"))).resolves.toBeUndefined();
  });

  it("adds up the folders of the origin's live sessions, each once, for the origin's quota", async () => {
    const mine = await workspace({ "/a.bin": 2 * MIB });
    const other = await workspace({ "/b.bin": 2 * MIB });
    const limits = quota({ assetBytesPerOrigin: 5 * MIB }, () => [other, other, mine]);
    await expect(limits.check(claim(mine, MIB))).resolves.toBeUndefined();
    await expect(limits.check(claim(mine, MIB + 1))).rejects.toMatchObject({
      code: "ASSET_QUOTA_EXCEEDED",
      details: { scope: "origin", limit: 5 * MIB, used: 4 * MIB, requested: MIB + 1, setting: "limits.assetBytesPerOrigin" },
    });
  });

  it("admits uploads racing from several sessions one at a time, counting each admitted one until it ends", async () => {
    const first = await workspace();
    const second = await workspace();
    const third = await workspace();
    const limits = quota({ assetBytesPerOrigin: 5 * MIB }, () => [first, second, third]);
    const outcomes = await Promise.allSettled([first, second, third].map((root, index) => limits.admit(claim(root, 2 * MIB, `s${index}`))));
    expect(outcomes.map((outcome) => outcome.status)).toEqual(["fulfilled", "fulfilled", "rejected"]);
    expect((outcomes[2] as PromiseRejectedResult).reason).toMatchObject({
      code: "ASSET_QUOTA_EXCEEDED",
      details: { scope: "origin", used: 4 * MIB },
    });
    // An admitted upload that ended (here without writing anything) no longer counts.
    (outcomes[0] as PromiseFulfilledResult<() => void>).value();
    await expect(limits.admit(claim(third, 2 * MIB, "s2"))).resolves.toBeTypeOf("function");
  });

  it("refuses an upload that would leave less than the floor free, with the free bytes", async () => {
    const root = await workspace();
    const limits = quota({ minFreeDiskBytes: 100 * MIB }, () => [], 110 * MIB);
    await expect(limits.check(claim(root, 10 * MIB))).resolves.toBeUndefined();
    await expect(limits.check(claim(root, 10 * MIB + 1))).rejects.toMatchObject({
      code: "DISK_SPACE_LOW",
      details: { limit: 100 * MIB, free: 110 * MIB, requested: 10 * MIB + 1, setting: "limits.minFreeDiskBytes" },
    });
  });
});
