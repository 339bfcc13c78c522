import { createServer } from "node:net";
import { lstat, mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { MAX_ASSET_BYTES } from "@pedelec/protocol/assets";
import { CoreConnection } from "@pedelec/core-client/core-client";
import { startCore, type RunningCore, type StartCoreOptions } from "../core-daemon.js";
import { createCoreHome } from "../testing/core-home.js";
import { exchange, patternBytes } from "../testing/asset-test-client.js";
import { codeOf } from "../testing/error-code.js";

const standInDir = resolve(fileURLToPath(new URL("../../../../test/stand-ins/claude", import.meta.url)));
const ORIGIN = "http://127.0.0.1:4000";
const OTHER_ORIGIN = "https://other.example";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface Harness {
  core: RunningCore;
  page: CoreConnection;
  /** A new session of ORIGIN (or `origin`), with its assets folder. */
  session(origin?: string): Promise<{ sessionId: string; assets: string; workspace: string }>;
}

async function startHarness(options: StartCoreOptions = {}): Promise<Harness> {
  const { home, env } = await createCoreHome({
    prefix: "pedelec-assets-",
    providerPath: standInDir,
    stateFolders: { CLAUDE_CONFIG_DIR: "claude-state" },
  });
  const core = await startCore(env, options);
  const page = await CoreConnection.open(core.paths.socketPath);
  cleanups.push(async () => {
    page.close();
    await core.stop();
    await rm(home, { recursive: true, force: true });
  });
  return {
    core,
    page,
    async session(origin = ORIGIN) {
      const info = await page.request("createSession", { provider: "claude" }, origin);
      return { sessionId: info.sessionId, workspace: info.workspace.path, assets: join(info.workspace.path, ".pedelec-runtime", "assets") };
    },
  };
}

/** The names left in the assets folder, Pedelec's temporary ones included. */
const namesIn = (folder: string): Promise<string[]> =>
  readdir(folder).catch((error: NodeJS.ErrnoException) => {
    // An ended session's managed workspace is removed, assets folder and all.
    if (error.code === "ENOENT") return [];
    throw error;
  });

describe("asset transfers through Core", () => {
  it("uploads, lists and downloads a file over the loopback server, with CORS for the session's origin only", async () => {
    const { page, core, session } = await startHarness();
    const { sessionId, assets } = await session();
    const body = "hello, assets\n";
    const ticket = await page.request(
      "prepareAssetUpload",
      { sessionId, path: "/notes/today.txt", sizeBytes: Buffer.byteLength(body), mimeType: "text/plain" },
      ORIGIN,
    );
    // The URL holds the port and the ticket and nothing else: no session, no path a client could change.
    expect(ticket.url).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${core.assetPort}/transfers/[A-Za-z0-9_-]{43}$`));
    expect(ticket.url).not.toContain("notes");
    expect(Date.parse(ticket.expiresAt) - Date.now()).toBeGreaterThan(50_000);

    const preflight = await exchange(ticket.url, {
      method: "OPTIONS",
      headers: {
        origin: ORIGIN,
        "access-control-request-method": "PUT",
        "access-control-request-headers": "content-type",
        "access-control-request-private-network": "true",
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers).toMatchObject({
      "access-control-allow-origin": ORIGIN,
      "access-control-allow-methods": "PUT",
      "access-control-allow-headers": "content-type",
      "access-control-allow-private-network": "true",
    });

    const put = await exchange(ticket.url, { method: "PUT", body, headers: { origin: ORIGIN, "content-type": "text/plain" } });
    expect(put.status).toBe(200);
    expect(put.headers["access-control-allow-origin"]).toBe(ORIGIN);
    const receipt = put.json() as { path: string; sizeBytes: number; modifiedAt: string };
    expect(receipt).toMatchObject({ path: "/notes/today.txt", sizeBytes: body.length });
    expect(await readFile(join(assets, "notes", "today.txt"), "utf8")).toBe(body);
    expect((await stat(join(assets, "notes", "today.txt"))).mode & 0o777).toBe(0o600);
    expect((await stat(join(assets, "notes"))).mode & 0o777).toBe(0o700);
    expect(await namesIn(assets)).toEqual(["notes"]);

    const listed = await page.request("listAssets", { sessionId }, ORIGIN);
    expect(listed).toEqual([{ name: "today.txt", path: "/notes/today.txt", sizeBytes: body.length, modifiedAt: receipt.modifiedAt }]);

    const download = await page.request("prepareAssetDownload", { sessionId, path: "/notes/today.txt" }, ORIGIN);
    expect(download).toMatchObject({ sizeBytes: body.length, mimeType: "text/plain", modifiedAt: receipt.modifiedAt });
    const got = await exchange(download.url, { method: "GET", headers: { origin: ORIGIN } });
    expect(got.status).toBe(200);
    expect(got.body.toString()).toBe(body);
    expect(got.headers).toMatchObject({
      "content-type": "text/plain",
      "content-length": String(body.length),
      "x-pedelec-modified-at": receipt.modifiedAt,
      "access-control-allow-origin": ORIGIN,
      "access-control-expose-headers": "Content-Length, Content-Type, Last-Modified, X-Pedelec-Modified-At",
    });
    expect(got.headers["last-modified"]).toBe(new Date(receipt.modifiedAt).toUTCString());

    // A replaced file is replaced whole; its type comes from its name.
    await writeFile(join(assets, "image.png"), Buffer.from([0x89, 0x50, 0x4e, 0x47]));
    expect(await page.request("prepareAssetDownload", { sessionId, path: "/image.png" }, ORIGIN)).toMatchObject({
      mimeType: "image/png",
      sizeBytes: 4,
    });
    expect(await page.request("prepareAssetDownload", { sessionId, path: "/notes/today.txt" }, ORIGIN)).toMatchObject({ mimeType: "text/plain" });
    await writeFile(join(assets, "blob.unknownext"), "x");
    expect(await page.request("prepareAssetDownload", { sessionId, path: "/blob.unknownext" }, ORIGIN)).toMatchObject({
      mimeType: "application/octet-stream",
    });
    const again = await page.request("prepareAssetUpload", { sessionId, path: "/notes/today.txt", sizeBytes: 3 }, ORIGIN);
    expect((await exchange(again.url, { method: "PUT", body: "new" })).status).toBe(200);
    expect(await readFile(join(assets, "notes", "today.txt"), "utf8")).toBe("new");
  });

  it("spends a ticket on its first request: reused, expired, wrong direction and unknown tickets are refused", async () => {
    let now = Date.now();
    const { page, core, session } = await startHarness({ assets: { ticketTtlMs: 1_000, now: () => now } });
    const { sessionId, assets } = await session();
    await writeFile(join(assets, "a.txt"), "aaa");

    const download = await page.request("prepareAssetDownload", { sessionId, path: "/a.txt" }, ORIGIN);
    expect((await exchange(download.url, { method: "GET", headers: { origin: ORIGIN } })).status).toBe(200);
    const reused = await exchange(download.url, { method: "GET", headers: { origin: ORIGIN } });
    expect(reused.status).toBe(403);
    expect(reused.json()).toMatchObject({ error: { code: "ASSET_DOWNLOAD_UNAUTHORIZED" } });
    // Still answered with CORS, so the page's SDK can read why.
    expect(reused.headers["access-control-allow-origin"]).toBe(ORIGIN);

    const upload = await page.request("prepareAssetUpload", { sessionId, path: "/b.txt", sizeBytes: 1 }, ORIGIN);
    expect((await exchange(upload.url, { method: "PUT", body: "b" })).status).toBe(200);
    const reusedUpload = await exchange(upload.url, { method: "PUT", body: "c" });
    expect(reusedUpload.status).toBe(403);
    expect(reusedUpload.json()).toMatchObject({ error: { code: "ASSET_UPLOAD_UNAUTHORIZED" } });
    expect(await readFile(join(assets, "b.txt"), "utf8")).toBe("b");

    // Expired: the clock moves past the ticket's lifetime.
    const late = await page.request("prepareAssetDownload", { sessionId, path: "/a.txt" }, ORIGIN);
    const lateUpload = await page.request("prepareAssetUpload", { sessionId, path: "/late.txt", sizeBytes: 1 }, ORIGIN);
    now += 1_001;
    const expired = await exchange(late.url, { method: "GET", headers: { origin: ORIGIN } });
    expect(expired.status).toBe(410);
    expect(expired.json()).toMatchObject({ error: { code: "ASSET_DOWNLOAD_TICKET_EXPIRED" } });
    const expiredUpload = await exchange(lateUpload.url, { method: "PUT", body: "x" });
    expect(expiredUpload.status).toBe(410);
    expect(expiredUpload.json()).toMatchObject({ error: { code: "ASSET_UPLOAD_TICKET_EXPIRED" } });
    await expect(lstat(join(assets, "late.txt"))).rejects.toMatchObject({ code: "ENOENT" });
    // An expired upload ticket no longer holds the session's one upload slot.
    await page.request("prepareAssetUpload", { sessionId, path: "/late.txt", sizeBytes: 1 }, ORIGIN);
    now += 1_001;

    // Wrong direction: a download ticket cannot upload, an upload ticket cannot download; either way it is spent.
    const forReading = await page.request("prepareAssetDownload", { sessionId, path: "/a.txt" }, ORIGIN);
    const wrongWay = await exchange(forReading.url, { method: "PUT", body: "zzz" });
    expect(wrongWay.status).toBe(403);
    expect(wrongWay.json()).toMatchObject({ error: { code: "ASSET_UPLOAD_UNAUTHORIZED" } });
    expect(await readFile(join(assets, "a.txt"), "utf8")).toBe("aaa");
    expect((await exchange(forReading.url, { method: "GET" })).status).toBe(403);
    const forWriting = await page.request("prepareAssetUpload", { sessionId, path: "/a.txt", sizeBytes: 1 }, ORIGIN);
    const readWithUpload = await exchange(forWriting.url, { method: "GET" });
    expect(readWithUpload.status).toBe(403);
    expect(readWithUpload.json()).toMatchObject({ error: { code: "ASSET_DOWNLOAD_UNAUTHORIZED" } });
    expect(readWithUpload.body.toString()).not.toContain("aaa");

    // No ticket, a made-up ticket, other paths and methods.
    const base = `http://127.0.0.1:${core.assetPort}`;
    for (const path of ["/", "/transfers", "/transfers/", `/transfers/${"a".repeat(43)}/x`, "/a.txt", `/transfers/${"a".repeat(43)}?x=1`]) {
      const answer = await exchange(`${base}${path}`, { method: "GET" });
      expect(answer.status, path).toBe(404);
      expect(answer.body.toString()).not.toContain("aaa");
    }
    const madeUp = await exchange(`${base}/transfers/${"A".repeat(43)}`, { method: "GET", headers: { origin: ORIGIN } });
    expect(madeUp.status).toBe(403);
    expect(madeUp.headers["access-control-allow-origin"]).toBeUndefined();
    const fresh = await page.request("prepareAssetDownload", { sessionId, path: "/a.txt" }, ORIGIN);
    const deleted = await exchange(fresh.url, { method: "DELETE" });
    expect(deleted.status).toBe(405);
    // A method the route does not use does not spend the ticket.
    expect((await exchange(fresh.url, { method: "GET" })).body.toString()).toBe("aaa");
  });

  it("ignores requests for another Host or from another origin, without spending the ticket", async () => {
    const { page, core, session } = await startHarness();
    const { sessionId, assets } = await session();
    await writeFile(join(assets, "a.txt"), "aaa");
    const download = await page.request("prepareAssetDownload", { sessionId, path: "/a.txt" }, ORIGIN);
    const upload = await page.request("prepareAssetUpload", { sessionId, path: "/up.txt", sizeBytes: 2 }, ORIGIN);

    // DNS rebinding: a page at attacker.example:port resolved to 127.0.0.1 sends its own Host.
    for (const host of [`attacker.example:${core.assetPort}`, `localhost:${core.assetPort}`, "127.0.0.1", `127.0.0.1:${(core.assetPort ?? 0) + 1}`]) {
      const rebound = await exchange(download.url, { method: "GET", headers: { host, origin: ORIGIN } });
      expect(rebound.status, host).toBe(421);
      expect(rebound.json()).toMatchObject({ error: { code: "ASSET_DOWNLOAD_UNAUTHORIZED" } });
      const reboundPut = await exchange(upload.url, { method: "PUT", body: "xx", headers: { host } });
      expect(reboundPut.status, host).toBe(421);
      expect(reboundPut.json()).toMatchObject({ error: { code: "ASSET_UPLOAD_UNAUTHORIZED" } });
    }

    // Another origin: no preflight, no request, no CORS headers, and the tickets stay good.
    const foreignPreflight = await exchange(upload.url, {
      method: "OPTIONS",
      headers: { origin: OTHER_ORIGIN, "access-control-request-method": "PUT" },
    });
    expect(foreignPreflight.status).toBe(403);
    expect(foreignPreflight.headers["access-control-allow-origin"]).toBeUndefined();
    const wrongMethodPreflight = await exchange(upload.url, {
      method: "OPTIONS",
      headers: { origin: ORIGIN, "access-control-request-method": "GET" },
    });
    expect(wrongMethodPreflight.status).toBe(403);
    const foreignGet = await exchange(download.url, { method: "GET", headers: { origin: OTHER_ORIGIN } });
    expect(foreignGet.status).toBe(403);
    expect(foreignGet.json()).toMatchObject({ error: { code: "ASSET_DOWNLOAD_UNAUTHORIZED" } });
    expect(foreignGet.headers["access-control-allow-origin"]).toBeUndefined();
    expect(foreignGet.body.toString()).not.toContain("aaa");
    const foreignPut = await exchange(upload.url, { method: "PUT", body: "xx", headers: { origin: OTHER_ORIGIN } });
    expect(foreignPut.status).toBe(403);
    expect(foreignPut.json()).toMatchObject({ error: { code: "ASSET_UPLOAD_UNAUTHORIZED" } });
    const nullOrigin = await exchange(download.url, { method: "GET", headers: { origin: "null" } });
    expect(nullOrigin.status).toBe(403);

    expect((await exchange(download.url, { method: "GET", headers: { origin: ORIGIN } })).body.toString()).toBe("aaa");
    expect((await exchange(upload.url, { method: "PUT", body: "ok", headers: { origin: ORIGIN } })).status).toBe(200);
    expect(await readFile(join(assets, "up.txt"), "utf8")).toBe("ok");

    // Another origin cannot ask for tickets to this session at all.
    expect(await codeOf(page.request("prepareAssetDownload", { sessionId, path: "/a.txt" }, OTHER_ORIGIN))).toBe("THREAD_NOT_FOUND");
    expect(await codeOf(page.request("listAssets", { sessionId }, OTHER_ORIGIN))).toBe("THREAD_NOT_FOUND");
  });

  it("binds a ticket to its session: each session's tickets reach its own workspace, and end with it", async () => {
    const { page, session } = await startHarness();
    const first = await session();
    const second = await session();
    const ticket = await page.request("prepareAssetUpload", { sessionId: first.sessionId, path: "/same.txt", sizeBytes: 5 }, ORIGIN);
    const otherTicket = await page.request("prepareAssetUpload", { sessionId: second.sessionId, path: "/same.txt", sizeBytes: 5 }, ORIGIN);
    expect((await exchange(otherTicket.url, { method: "PUT", body: "two!!" })).status).toBe(200);
    expect(await readFile(join(second.assets, "same.txt"), "utf8")).toBe("two!!");
    await expect(lstat(join(first.assets, "same.txt"))).rejects.toMatchObject({ code: "ENOENT" });

    const download = await page.request("prepareAssetDownload", { sessionId: second.sessionId, path: "/same.txt" }, ORIGIN);
    await page.request("endSession", { sessionId: second.sessionId }, ORIGIN);
    const afterEnd = await exchange(download.url, { method: "GET", headers: { origin: ORIGIN } });
    expect(afterEnd.status).toBe(410);
    expect(afterEnd.json()).toMatchObject({ error: { code: "SESSION_ENDED" } });
    expect(afterEnd.headers["access-control-allow-origin"]).toBe(ORIGIN);
    expect(await codeOf(page.request("prepareAssetUpload", { sessionId: second.sessionId, path: "/x", sizeBytes: 1 }, ORIGIN))).toBe("SESSION_ENDED");
    expect(await codeOf(page.request("prepareAssetDownload", { sessionId: second.sessionId, path: "/same.txt" }, ORIGIN))).toBe("SESSION_ENDED");
    expect(await codeOf(page.request("listAssets", { sessionId: second.sessionId }, ORIGIN))).toBe("SESSION_ENDED");

    // The first session is untouched by the second one's end.
    expect((await exchange(ticket.url, { method: "PUT", body: "one!!" })).status).toBe(200);
    expect(await readFile(join(first.assets, "same.txt"), "utf8")).toBe("one!!");
  });

  it("refuses bodies of the wrong size, before reading them when the length is announced, and keeps nothing", async () => {
    const { page, session } = await startHarness();
    const { sessionId, assets } = await session();
    const prepare = (sizeBytes: number) => page.request("prepareAssetUpload", { sessionId, path: "/sized.bin", sizeBytes }, ORIGIN);

    expect(await codeOf(prepare(MAX_ASSET_BYTES + 1))).toBe("ASSET_TOO_LARGE");

    let ticket = await prepare(10);
    let answer = await exchange(ticket.url, { method: "PUT", body: Buffer.alloc(11) });
    expect(answer.status).toBe(413);
    expect(answer.json()).toMatchObject({ error: { code: "ASSET_UPLOAD_SIZE_MISMATCH" } });

    ticket = await prepare(10);
    answer = await exchange(ticket.url, { method: "PUT", body: Buffer.alloc(9) });
    expect(answer.status).toBe(400);
    expect(answer.json()).toMatchObject({ error: { code: "ASSET_UPLOAD_SIZE_MISMATCH" } });

    // A length over the cap is refused as too large from the header alone, before a byte of the body is read.
    ticket = await prepare(10);
    answer = await exchange(ticket.url, {
      method: "PUT",
      headers: { "content-length": MAX_ASSET_BYTES + 1 },
      body: patternBytes(MAX_ASSET_BYTES + 1),
    });
    expect(answer.status).toBe(413);
    expect(answer.json()).toMatchObject({ error: { code: "ASSET_TOO_LARGE" } });

    // Chunked bodies (no length announced) are counted as they stream: reading stops at the first byte too many.
    ticket = await prepare(1024);
    answer = await exchange(ticket.url, { method: "PUT", body: patternBytes(64 * 1024 * 1024, 64 * 1024) });
    expect(answer.status).toBe(413);
    expect(answer.json()).toMatchObject({ error: { code: "ASSET_UPLOAD_SIZE_MISMATCH" } });

    ticket = await prepare(1024);
    answer = await exchange(ticket.url, { method: "PUT", body: patternBytes(1000) });
    expect(answer.status).toBe(400);
    expect(answer.json()).toMatchObject({ error: { code: "ASSET_UPLOAD_SIZE_MISMATCH" } });

    ticket = await prepare(1024);
    answer = await exchange(ticket.url, { method: "PUT", body: patternBytes(1024) });
    expect(answer.status).toBe(200);
    expect((await stat(join(assets, "sized.bin"))).size).toBe(1024);
    expect(await namesIn(assets)).toEqual(["sized.bin"]);
  });

  it("allows one upload at a time per session, and leaves nothing when the client goes away midway", async () => {
    const { page, session } = await startHarness();
    const { sessionId, assets } = await session();
    const other = await session();
    const size = 8 * 1024 * 1024;
    // A ticket nobody used yet does not hold the slot: the newer prepare spends it (a page that gave up is not locked out).
    const abandoned = await page.request("prepareAssetUpload", { sessionId, path: "/abandoned.bin", sizeBytes: 1 }, ORIGIN);
    const first = await page.request("prepareAssetUpload", { sessionId, path: "/big.bin", sizeBytes: size }, ORIGIN);
    const late = await exchange(abandoned.url, { method: "PUT", body: "a" });
    expect([late.status, late.json()]).toMatchObject([403, { error: { code: "ASSET_UPLOAD_UNAUTHORIZED" } }]);
    // Other sessions go on.
    await page.request("prepareAssetUpload", { sessionId: other.sessionId, path: "/x", sizeBytes: 1 }, ORIGIN);

    // …and while its body is streaming: send half, then wait (the server holds a temporary file), then cut.
    const cut = new AbortController();
    let sentHalf: () => void = () => undefined;
    const halfSent = new Promise<void>((resolvePromise) => (sentHalf = resolvePromise));
    async function* halfThenStall(): AsyncGenerator<Buffer> {
      yield* patternBytes(size / 2);
      sentHalf();
      await new Promise<void>((resolvePromise) => cut.signal.addEventListener("abort", () => resolvePromise()));
    }
    const transfer = exchange(first.url, { method: "PUT", headers: { "content-length": size }, body: halfThenStall(), signal: cut.signal });
    await halfSent;
    await expect.poll(async () => (await namesIn(assets)).some((name) => name.startsWith(".pedelec-upload-")), { timeout: 5_000 }).toBe(true);
    expect(await codeOf(page.request("prepareAssetUpload", { sessionId, path: "/second.bin", sizeBytes: 1 }, ORIGIN))).toBe("SESSION_BUSY");
    expect((await page.request("listAssets", { sessionId }, ORIGIN)).map((entry) => entry.path)).toEqual([]);
    cut.abort();
    await expect(transfer).rejects.toThrow();
    await expect.poll(() => namesIn(assets), { timeout: 5_000 }).toEqual([]);
    // The slot is free again once the transfer has ended, which comes a moment after its temporary file is gone.
    const prepareSecond = () => codeOf(page.request("prepareAssetUpload", { sessionId, path: "/second.bin", sizeBytes: 1 }, ORIGIN));
    await expect.poll(prepareSecond, { timeout: 5_000 }).toBe("accepted");
  });

  it("cuts an upload under way when its session ends, and removes the partial file", async () => {
    const { page, session } = await startHarness();
    const { sessionId, assets } = await session();
    const size = 4 * 1024 * 1024;
    const ticket = await page.request("prepareAssetUpload", { sessionId, path: "/cut.bin", sizeBytes: size }, ORIGIN);
    const stop = new AbortController();
    async function* stall(): AsyncGenerator<Buffer> {
      yield* patternBytes(size / 4);
      await new Promise<void>((resolvePromise) => stop.signal.addEventListener("abort", () => resolvePromise()));
    }
    const transfer = exchange(ticket.url, { method: "PUT", headers: { "content-length": size }, body: stall(), signal: stop.signal });
    await expect.poll(async () => (await namesIn(assets)).length, { timeout: 5_000 }).toBe(1);
    await page.request("endSession", { sessionId }, ORIGIN);
    const answer = await transfer;
    stop.abort();
    expect(answer.status).toBe(410);
    expect(answer.json()).toMatchObject({ error: { code: "SESSION_ENDED" } });
    await expect.poll(() => namesIn(assets), { timeout: 5_000 }).toEqual([]);
  });

  it("answers each of Core's asset codes", async () => {
    const { page, session } = await startHarness();
    const { sessionId, assets, workspace } = await session();
    await mkdir(join(assets, "folder"));
    await symlink("/etc", join(assets, "etc-link"));
    // Past the schema's INVALID_INPUT, Core's own check names the path problem.
    expect(await codeOf(page.request("prepareAssetUpload", { sessionId, path: "/../x", sizeBytes: 1 }, ORIGIN))).toBe("INVALID_INPUT");
    expect(await codeOf(page.request("prepareAssetDownload", { sessionId, path: "/etc-link/passwd" }, ORIGIN))).toBe("ASSET_PATH_INVALID");
    expect(await codeOf(page.request("prepareAssetUpload", { sessionId, path: "/etc-link/x", sizeBytes: 1 }, ORIGIN))).toBe("ASSET_PATH_INVALID");
    expect(await codeOf(page.request("prepareAssetDownload", { sessionId, path: "/missing.txt" }, ORIGIN))).toBe("ASSET_NOT_FOUND");
    expect(await codeOf(page.request("prepareAssetDownload", { sessionId, path: "/folder" }, ORIGIN))).toBe("ASSET_NOT_FILE");
    expect(await codeOf(page.request("prepareAssetUpload", { sessionId, path: "/folder", sizeBytes: 1 }, ORIGIN))).toBe("ASSET_NOT_FILE");
    expect(await codeOf(page.request("prepareAssetUpload", { sessionId, path: "/big", sizeBytes: MAX_ASSET_BYTES + 1 }, ORIGIN))).toBe(
      "ASSET_TOO_LARGE",
    );

    // A file that became a folder, or vanished, after its ticket was made.
    await writeFile(join(assets, "changes.txt"), "x");
    await writeFile(join(assets, "goes.txt"), "x");
    const becomesFolder = await page.request("prepareAssetDownload", { sessionId, path: "/changes.txt" }, ORIGIN);
    const vanishes = await page.request("prepareAssetDownload", { sessionId, path: "/goes.txt" }, ORIGIN);
    const uploadOnto = await page.request("prepareAssetUpload", { sessionId, path: "/changes.txt", sizeBytes: 1 }, ORIGIN);
    await rm(join(assets, "changes.txt"));
    await mkdir(join(assets, "changes.txt"));
    await rm(join(assets, "goes.txt"));
    let answer = await exchange(becomesFolder.url, { method: "GET" });
    expect([answer.status, answer.json()]).toMatchObject([409, { error: { code: "ASSET_NOT_FILE" } }]);
    answer = await exchange(vanishes.url, { method: "GET" });
    expect([answer.status, answer.json()]).toMatchObject([404, { error: { code: "ASSET_NOT_FOUND" } }]);
    answer = await exchange(uploadOnto.url, { method: "PUT", body: "y" });
    expect([answer.status, answer.json()]).toMatchObject([409, { error: { code: "ASSET_NOT_FILE" } }]);

    // The agent replaced the assets folder with a symlink: Core never goes through it. Each operation first repairs
    // Pedelec's folder (the link is removed, the folder made again), so nothing reaches /etc and nothing fails for good.
    await writeFile(join(assets, "kept.txt"), "x");
    const readLater = await page.request("prepareAssetDownload", { sessionId, path: "/kept.txt" }, ORIGIN);
    const writeLater = await page.request("prepareAssetUpload", { sessionId, path: "/kept.txt", sizeBytes: 1 }, ORIGIN);
    const plantLink = async () => {
      await rm(assets, { recursive: true, force: true });
      await symlink("/etc", assets);
    };
    await plantLink();
    expect(await codeOf(page.request("listAssets", { sessionId }, ORIGIN))).toBe("accepted");
    expect((await lstat(assets)).isDirectory()).toBe(true);
    await plantLink();
    expect(await codeOf(page.request("prepareAssetDownload", { sessionId, path: "/passwd" }, ORIGIN))).toBe("ASSET_NOT_FOUND");
    await plantLink();
    answer = await exchange(readLater.url, { method: "GET" });
    expect([answer.status, answer.json()]).toMatchObject([404, { error: { code: "ASSET_NOT_FOUND" } }]);
    await plantLink();
    answer = await exchange(writeLater.url, { method: "PUT", body: "z" });
    expect(answer.status).toBe(200);
    expect(await readFile(join(assets, "kept.txt"), "utf8")).toBe("z");
    await expect(lstat("/etc/kept.txt")).rejects.toMatchObject({ code: "ENOENT" });
    // .pedelec-runtime itself a link: the user's folder, not repaired; every operation refuses with its own code.
    const runtime = join(assets, "..");
    const sideline = await mkdtemp(join(tmpdir(), "pedelec-sideline-"));
    await rm(runtime, { recursive: true });
    await symlink(sideline, runtime);
    expect(await codeOf(page.request("listAssets", { sessionId }, ORIGIN))).toBe("ASSET_LIST_FAILED");
    expect(await codeOf(page.request("prepareAssetDownload", { sessionId, path: "/passwd" }, ORIGIN))).toBe("ASSET_READ_FAILED");
    expect(await codeOf(page.request("prepareAssetUpload", { sessionId, path: "/x", sizeBytes: 1 }, ORIGIN))).toBe("ASSET_UPLOAD_FAILED");
    expect(await readdir(sideline)).toEqual([]);
    await rm(sideline, { recursive: true });
    expect(await lstat(workspace)).toBeTruthy();
  });

  it("keeps Core running when the asset server cannot start, and says so to the requests that need it", async () => {
    const blocker = createServer();
    await new Promise<void>((resolvePromise) => blocker.listen(0, "127.0.0.1", resolvePromise));
    cleanups.push(() => new Promise((resolvePromise) => blocker.close(() => resolvePromise())));
    const port = (blocker.address() as { port: number }).port;
    const { page, core, session } = await startHarness({ assets: { port } });
    const { sessionId, assets } = await session();
    expect(core.assetPort).toBeNull();
    await writeFile(join(assets, "a.txt"), "a");
    expect(await codeOf(page.request("prepareAssetUpload", { sessionId, path: "/b.txt", sizeBytes: 1 }, ORIGIN))).toBe(
      "ASSET_UPLOAD_SERVER_UNAVAILABLE",
    );
    expect(await codeOf(page.request("prepareAssetDownload", { sessionId, path: "/a.txt" }, ORIGIN))).toBe("ASSET_UPLOAD_SERVER_UNAVAILABLE");
    expect((await page.request("listAssets", { sessionId }, ORIGIN)).map((entry) => entry.path)).toEqual(["/a.txt"]);
  });

  it("lists regular files newest first, then by path, hiding Pedelec's names and symlinks", async () => {
    const { page, session } = await startHarness();
    const { sessionId, assets } = await session();
    const at = (seconds: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, seconds));
    await mkdir(join(assets, "deep", "deeper"), { recursive: true });
    await mkdir(join(assets, ".pedelec-upload-dir"));
    await writeFile(join(assets, ".pedelec-upload-dir", "inside.txt"), "hidden");
    await writeFile(join(assets, ".pedelec-upload-123"), "partial");
    await writeFile(join(assets, "deep", ".Pedelec-note"), "hidden");
    const files: [string, number][] = [
      ["/b.txt", 10],
      ["/a.txt", 10],
      ["/deep/deeper/new.md", 30],
      ["/deep/old.bin", 1],
    ];
    for (const [path, seconds] of files) {
      await writeFile(join(assets, path), path);
      await utimes(join(assets, path), at(seconds), at(seconds));
    }
    await symlink(join(assets, "a.txt"), join(assets, "alias.txt"));
    await symlink(join(assets, "deep"), join(assets, "deep-alias"));
    await writeFile(join(assets, "back\\slash.txt"), "not addressable");
    const listed = await page.request("listAssets", { sessionId }, ORIGIN);
    expect(listed).toEqual([
      { name: "new.md", path: "/deep/deeper/new.md", sizeBytes: "/deep/deeper/new.md".length, modifiedAt: at(30).toISOString() },
      { name: "a.txt", path: "/a.txt", sizeBytes: 6, modifiedAt: at(10).toISOString() },
      { name: "b.txt", path: "/b.txt", sizeBytes: 6, modifiedAt: at(10).toISOString() },
      { name: "old.bin", path: "/deep/old.bin", sizeBytes: "/deep/old.bin".length, modifiedAt: at(1).toISOString() },
    ]);
  });
});
