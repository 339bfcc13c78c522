import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { approvedSession, setUpE2e, type E2eEnvironment } from "./harness.js";
import { attempt } from "./page-scripts.js";

let environment: E2eEnvironment | undefined;

afterEach(async () => {
  await environment?.close();
  environment = undefined;
});

const MIB = 1024 * 1024;

/** What a refused call in the page carried: its code, its details and the remedy the page would show. */
interface Refusal {
  code: string;
  details: Record<string, unknown>;
  remedy: string;
}

describe("a hostile approved page meets the per-origin limits, in real Chromium", () => {
  it("creates at most 50 live sessions of 300 fired at once, and learns the limit from the error", async () => {
    environment = await setUpE2e({ startCore: true });
    const { page } = await approvedSession(environment);
    const outcome = await page.evaluate(async () => {
      const w = window as unknown as Record<string, any>;
      const settled = await Promise.allSettled(Array.from({ length: 300 }, () => w.pedelec.createSession({ provider: "claude" })));
      const refusals = settled.flatMap((one) => (one.status === "rejected" ? [one.reason] : []));
      return {
        created: settled.filter((one) => one.status === "fulfilled").length,
        codes: [...new Set(refusals.map((error: any) => String(error.code)))],
        first: refusals[0] === undefined ? null : { code: refusals[0].code, details: refusals[0].details, remedy: refusals[0].remedy },
      };
    });
    // The approved session made by approvedSession counts too.
    expect(outcome.created).toBe(49);
    expect(outcome.codes).toEqual(["SESSION_LIMIT_REACHED"]);
    expect(outcome.first).toEqual({
      code: "SESSION_LIMIT_REACHED",
      details: { limit: 50, used: 50, requested: 1, scope: "origin", setting: "limits.liveSessionsPerOrigin" },
      remedy: expect.stringContaining("limits.liveSessionsPerOrigin"),
    });
    const status = await environment.pedelec("status", "--json");
    expect(JSON.parse(status.stdout)).toMatchObject({ sessions: 50 });

    // Ending one gives its slot back to the page.
    const again = await attempt(page, "await window.session.end(); return (await window.pedelec.createSession({ provider: 'claude' })).getStatus();");
    expect(again).toEqual({ ok: true, value: "idle" });
  });

  it("refuses uploads past the session's and the origin's quotas and below the disk's floor, and scripts below the floor", async () => {
    environment = await setUpE2e({ startCore: true });
    await writeFile(
      join(environment.home, "settings.json"),
      JSON.stringify({ limits: { assetBytesPerSession: 8 * MIB, assetBytesPerOrigin: 12 * MIB } }),
    );
    const { page } = await approvedSession(environment);
    await page.evaluate(async () => {
      const w = window as unknown as Record<string, any>;
      w.second = await w.pedelec.createSession({ provider: "claude" });
      w.third = await w.pedelec.createSession({ provider: "claude" });
      w.uploadTo = async (session: any, path: string, mebibytes: number) => {
        try {
          return { ok: true, path: await session.uploadAsset(new Blob([new Uint8Array(mebibytes * 1024 * 1024)]), path) };
        } catch (error: any) {
          return { ok: false, code: error.code, details: error.details, remedy: error.remedy };
        }
      };
    });
    const upload = (session: string, path: string, mebibytes: number) =>
      page.evaluate(([name, target, size]) => (window as unknown as Record<string, any>).uploadTo((window as any)[name], target, size), [
        session,
        path,
        mebibytes,
      ] as const) as Promise<{ ok: true; path: string } | ({ ok: false } & Refusal)>;

    expect(await upload("session", "/one.bin", 5)).toEqual({ ok: true, path: "/one.bin" });
    expect(await upload("session", "/two.bin", 5)).toMatchObject({
      ok: false,
      code: "ASSET_QUOTA_EXCEEDED",
      details: { scope: "session", limit: 8 * MIB, used: 5 * MIB, requested: 5 * MIB, setting: "limits.assetBytesPerSession" },
    });
    expect(await upload("second", "/one.bin", 5)).toEqual({ ok: true, path: "/one.bin" });
    expect(await upload("third", "/one.bin", 5)).toMatchObject({
      ok: false,
      code: "ASSET_QUOTA_EXCEEDED",
      details: { scope: "origin", limit: 12 * MIB, used: 10 * MIB, requested: 5 * MIB, setting: "limits.assetBytesPerOrigin" },
    });
    // A small one still fits.
    expect(await upload("third", "/small.bin", 1)).toEqual({ ok: true, path: "/small.bin" });

    // The user raises the floor past what the disk has free: uploads and scripts stop before writing anything.
    const floor = await environment.pedelec("config", "set", "limits.minFreeDiskBytes", "4096TiB");
    expect(floor.code).toBe(0);
    const low = await upload("third", "/tiny.bin", 0);
    expect(low).toMatchObject({
      ok: false,
      code: "DISK_SPACE_LOW",
      details: { limit: 4096 * 1024 ** 4, requested: 0, setting: "limits.minFreeDiskBytes" },
    });
    expect((low as Refusal).details.free).toBeGreaterThan(0);
    expect(await attempt(page, `return await window.session.workspace.run({ source: "Deno.writeTextFileSync('x.txt', 'x')" });`)).toMatchObject({
      ok: false,
      code: "DISK_SPACE_LOW",
    });
    const listed = await attempt<{ path: string }[]>(page, "return (await window.third.listAssets()).map((entry) => entry.path);");
    expect(listed).toEqual({ ok: true, value: ["/small.bin"] });
  });
});
