import { stat, statfs, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { CoreConnection } from "@pedelec/core-client/core-client";
import type { ResourceLimits } from "@pedelec/protocol/resource-limits";
import { exchange } from "./testing/asset-test-client.js";
import { useCoreUnderTest } from "./testing/core-home.js";

const standInDir = resolve(fileURLToPath(new URL("../../../test/stand-ins/claude", import.meta.url)));
const ORIGIN = "https://app.example";
const OTHER_ORIGIN = "https://other.example";
const MIB = 1024 * 1024;

const core = useCoreUnderTest({ prefix: "pedelec-limits-", providerPath: standInDir, stateFolders: { CLAUDE_CONFIG_DIR: "claude-state" } });

/** Core on a home whose settings.json holds `limits`; the page's connection to it. */
async function coreWithLimits(limits: Partial<ResourceLimits>): Promise<CoreConnection> {
  await writeFile(join(core.home, "settings.json"), JSON.stringify({ limits }));
  const running = await core.start();
  const page = await CoreConnection.open(running.paths.socketPath);
  return page;
}

const failureOf = (promise: Promise<unknown>): Promise<unknown> =>
  promise.then(
    () => undefined,
    (error: unknown) => error,
  );

describe("limits per origin, enforced by Core", () => {
  it("lets an origin hold as many live sessions as its limit, even when the creates race, and counts each origin apart", async () => {
    const page = await coreWithLimits({ liveSessionsPerOrigin: 5 });
    try {
      const outcomes = await Promise.allSettled(Array.from({ length: 12 }, () => page.request("createSession", { provider: "claude" }, ORIGIN)));
      const created = outcomes.filter((outcome) => outcome.status === "fulfilled");
      const refused = outcomes.filter((outcome) => outcome.status === "rejected").map((outcome) => outcome.reason as unknown);
      expect(created).toHaveLength(5);
      expect(refused).toHaveLength(7);
      for (const error of refused) {
        expect(error).toMatchObject({
          code: "SESSION_LIMIT_REACHED",
          details: { limit: 5, used: 5, requested: 1, scope: "origin", setting: "limits.liveSessionsPerOrigin" },
        });
      }
      // Another site is not held back by this one.
      await expect(page.request("createSession", { provider: "claude" }, OTHER_ORIGIN)).resolves.toMatchObject({ status: "idle" });
      // An ended session gives its slot back.
      const first = (created[0] as PromiseFulfilledResult<{ sessionId: string }>).value;
      await page.request("endSession", { sessionId: first.sessionId }, ORIGIN);
      await expect(page.request("createSession", { provider: "claude" }, ORIGIN)).resolves.toMatchObject({ status: "idle" });
    } finally {
      page.close();
    }
  });

  it("refuses uploads past the session's and the origin's asset quotas, when prepared and when two race to the server", async () => {
    const page = await coreWithLimits({ assetBytesPerSession: 3 * MIB, assetBytesPerOrigin: 5 * MIB });
    try {
      const [first, second, third] = await Promise.all(
        [1, 2, 3].map(async () => (await page.request("createSession", { provider: "claude" }, ORIGIN)).sessionId),
      );
      const upload = async (sessionId: string, path: string, bytes: number) => {
        const ticket = await page.request("prepareAssetUpload", { sessionId, path, sizeBytes: bytes, mimeType: "application/octet-stream" }, ORIGIN);
        return exchange(ticket.url, { method: "PUT", body: Buffer.alloc(bytes), headers: { origin: ORIGIN } });
      };
      expect((await upload(first!, "/a.bin", 2 * MIB)).status).toBe(200);
      // Past the session's 3 MiB.
      expect(
        await failureOf(page.request("prepareAssetUpload", { sessionId: first!, path: "/b.bin", sizeBytes: MIB + 1, mimeType: "x/y" }, ORIGIN)),
      ).toMatchObject({
        code: "ASSET_QUOTA_EXCEEDED",
        details: { scope: "session", limit: 3 * MIB, used: 2 * MIB, requested: MIB + 1 },
      });
      // Replacing the file is within it.
      expect((await upload(first!, "/a.bin", 3 * MIB)).status).toBe(200);

      // Two sessions each get a ticket for 2 MiB (3 + 2 fits the origin's 5 MiB, 3 + 2 + 2 does not) and send together.
      const tickets = await Promise.all(
        [second!, third!].map((sessionId) =>
          page.request("prepareAssetUpload", { sessionId, path: "/c.bin", sizeBytes: 2 * MIB, mimeType: "x/y" }, ORIGIN),
        ),
      );
      const puts = await Promise.all(
        tickets.map((ticket) => exchange(ticket.url, { method: "PUT", body: Buffer.alloc(2 * MIB), headers: { origin: ORIGIN } })),
      );
      expect(puts.map((put) => put.status).sort()).toEqual([200, 413]);
      const refused = puts.find((put) => put.status === 413)!;
      expect(refused.json()).toMatchObject({
        error: {
          code: "ASSET_QUOTA_EXCEEDED",
          details: { scope: "origin", limit: 5 * MIB, used: 5 * MIB, requested: 2 * MIB, setting: "limits.assetBytesPerOrigin" },
        },
      });
      const listed = await Promise.all([second!, third!].map((sessionId) => page.request("listAssets", { sessionId }, ORIGIN)));
      expect(listed.map((assets) => assets.length).sort()).toEqual([0, 1]);
    } finally {
      page.close();
    }
  });

  it("refuses an upload and a script when the disk would drop below the free-space floor", async () => {
    const page = await coreWithLimits({ minFreeDiskBytes: Number.MAX_SAFE_INTEGER });
    try {
      const { sessionId } = await page.request("createSession", { provider: "claude" }, ORIGIN);
      expect(
        await failureOf(page.request("prepareAssetUpload", { sessionId, path: "/a.txt", sizeBytes: 1, mimeType: "text/plain" }, ORIGIN)),
      ).toMatchObject({
        code: "DISK_SPACE_LOW",
        details: { limit: Number.MAX_SAFE_INTEGER, requested: 1, setting: "limits.minFreeDiskBytes" },
      });
      expect(await failureOf(page.request("runWorkspaceScript", { sessionId, runId: "r1", source: "console.log(1)" }, ORIGIN))).toMatchObject({
        code: "DISK_SPACE_LOW",
        details: { limit: Number.MAX_SAFE_INTEGER, requested: 0 },
      });
    } finally {
      page.close();
    }
  });

  it("stops a running script once its writes take the disk below the floor", async () => {
    const disk = await statfs(core.home);
    // 64 MiB of writes from here crosses the floor; the script would write 2 GiB.
    const page = await coreWithLimits({ minFreeDiskBytes: disk.bavail * disk.bsize - 64 * MIB });
    try {
      const { sessionId, workspace } = await page.request("createSession", { provider: "claude" }, ORIGIN);
      const source = `
        const file = await Deno.open("fill.bin", { write: true, create: true });
        const chunk = new Uint8Array(1024 * 1024);
        for (let written = 0; written < 2048; written += 1) {
          await file.write(chunk);
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
        console.log("wrote it all");`;
      expect(await failureOf(page.request("runWorkspaceScript", { sessionId, runId: "fill", source }, ORIGIN))).toMatchObject({
        code: "DISK_SPACE_LOW",
        details: { requested: 0, setting: "limits.minFreeDiskBytes" },
      });
      const written = (await stat(join(workspace.path, "fill.bin"))).size;
      expect(written).toBeGreaterThanOrEqual(32 * MIB);
      expect(written).toBeLessThan(1024 * MIB);
    } finally {
      page.close();
    }
  });
});
