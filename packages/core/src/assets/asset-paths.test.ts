import { lstat, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AssetTransfers, type AssetSession } from "./asset-transfers.js";
import { exchange } from "../testing/asset-test-client.js";
import { codeOf } from "../testing/error-code.js";
import { DISGUISING_ASSET_PATHS } from "@pedelec/protocol/testing/disguising-asset-paths";

const ORIGIN = "http://127.0.0.1:4000";
let root: string;
let assets: string;
let outside: string;
let transfers: AssetTransfers;
let counter = 0;

/** A fresh session on the shared workspace: each upload gets its own, since a session uploads one file at a time. */
function session(): AssetSession {
  counter += 1;
  return {
    id: `session-${counter}`,
    origin: ORIGIN,
    ended: false,
    endedSignal: new AbortController().signal,
    setup: { workspace: { path: join(root, "ws") } },
  };
}

async function upload(path: string, body: string): Promise<unknown> {
  const { url } = await transfers.prepareUpload(session(), { path, sizeBytes: Buffer.byteLength(body) });
  const answer = await exchange(url, { method: "PUT", body, headers: { origin: ORIGIN } });
  return { status: answer.status, body: answer.json() };
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "pedelec-asset-paths-"));
  assets = join(root, "ws", ".pedelec-runtime", "assets");
  outside = join(root, "outside");
  await mkdir(assets, { recursive: true });
  await mkdir(outside);
  await writeFile(join(outside, "secret.txt"), "outside secret");
  await symlink(outside, join(assets, "out"));
  await symlink(join(outside, "secret.txt"), join(assets, "link.txt"));
  await mkdir(join(assets, "folder"));
  await writeFile(join(assets, "file.txt"), "a file");
  transfers = await AssetTransfers.start();
});

afterAll(async () => {
  await transfers.close();
  await rm(root, { recursive: true, force: true });
});

// Paths that break the shared rule. The page's schema refuses them with INVALID_INPUT before Core sees them; Core,
// called past the schema, refuses them again with ASSET_PATH_INVALID, for uploads and downloads alike.
const refused: [label: string, path: string][] = [
  ["a .. segment", "/../x"],
  ["a .. segment in the middle", "/a/../b"],
  ["climbing above the root", "/a/b/../../../etc/passwd"],
  ["a . segment", "/./x"],
  ["an empty segment", "/a//b"],
  ["a trailing slash", "/a/"],
  ["the root itself", "/"],
  ["an empty path", ""],
  ["a relative path", "a.txt"],
  ["a doubled leading slash (host path)", "//etc/passwd"],
  ["a backslash", "/a\\b"],
  ["backslash dots", "/..\\..\\x"],
  ["a NUL", "/a\u0000b"],
  ["a tab", "/a\tb"],
  ["a 256-byte name", `/${"x".repeat(256)}`],
  ["a 256-byte name of 2-byte characters", `/${"é".repeat(128)}`],
  ["a full-width slash", "/a\uff0fb"],
  ["one-dot leaders standing in for ..", "/\u2024\u2024/x"],
  ["a ligature NFKC folds", "/\ufb01le.txt"],
  ["Pedelec's own temporary name", "/.pedelec-upload-0123"],
  ["Pedelec's prefix in capitals", "/.PEDELEC-x"],
  ["Pedelec's prefix deeper down", "/sub/.pedelec-x/y"],
  // Bidi controls, other invisible format characters, names ending in a space or a dot: the same list the SDK refuses.
  ...DISGUISING_ASSET_PATHS,
];

describe("asset paths", () => {
  it.each(refused)("refuses %s with ASSET_PATH_INVALID", async (_label, path) => {
    expect(await codeOf(transfers.prepareUpload(session(), { path, sizeBytes: 1 }))).toBe("ASSET_PATH_INVALID");
    expect(await codeOf(transfers.prepareDownload(session(), { path }))).toBe("ASSET_PATH_INVALID");
  });

  it("takes percent-encoding, host-looking paths and odd dots literally, always inside the assets folder", async () => {
    // Nothing decodes asset paths: "%2e%2e" is a folder of that name, not "..".
    expect(await upload("/%2e%2e/x", "one")).toMatchObject({ status: 200, body: { path: "/%2e%2e/x", sizeBytes: 3 } });
    expect(await readFile(join(assets, "%2e%2e", "x"), "utf8")).toBe("one");
    expect(await upload("/%2F..%2Fescape", "two")).toMatchObject({ status: 200 });
    expect(await readFile(join(assets, "%2F..%2Fescape"), "utf8")).toBe("two");
    // A host path names a file under assets/, never the host's.
    expect(await codeOf(transfers.prepareDownload(session(), { path: "/etc/passwd" }))).toBe("ASSET_NOT_FOUND");
    expect(await upload("/etc/passwd", "three")).toMatchObject({ status: 200 });
    expect(await readFile(join(assets, "etc", "passwd"), "utf8")).toBe("three");
    expect(await upload("/C:/Windows", "four")).toMatchObject({ status: 200 });
    expect(await readFile(join(assets, "C:", "Windows"), "utf8")).toBe("four");
    expect(await upload("/..a/x", "five")).toMatchObject({ status: 200 });
    expect(await readFile(join(assets, "..a", "x"), "utf8")).toBe("five");
    expect(await upload(`/${"x".repeat(255)}`, "six")).toMatchObject({ status: 200 });
  });

  it("follows no symlink: not to upload through, not to replace, not to read, not to list", async () => {
    expect(await codeOf(transfers.prepareUpload(session(), { path: "/out/new.txt", sizeBytes: 1 }))).toBe("ASSET_PATH_INVALID");
    expect(await codeOf(transfers.prepareUpload(session(), { path: "/link.txt", sizeBytes: 1 }))).toBe("ASSET_PATH_INVALID");
    expect(await codeOf(transfers.prepareDownload(session(), { path: "/out/secret.txt" }))).toBe("ASSET_PATH_INVALID");
    expect(await codeOf(transfers.prepareDownload(session(), { path: "/link.txt" }))).toBe("ASSET_PATH_INVALID");
    expect(await readFile(join(outside, "secret.txt"), "utf8")).toBe("outside secret");
    await expect(lstat(join(outside, "new.txt"))).rejects.toMatchObject({ code: "ENOENT" });
    const listed = (await transfers.list(session())).map((entry) => entry.path);
    expect(listed).not.toContain("/link.txt");
    expect(listed.some((path) => path.startsWith("/out"))).toBe(false);
    expect(listed).toContain("/file.txt");
  });

  it("neither lists nor reads a disguised name an agent wrote on disk", async () => {
    await writeFile(join(assets, "invoice\u202efdp.exe"), "disguised");
    await writeFile(join(assets, "trailing. "), "trailing");
    const listed = (await transfers.list(session())).map((entry) => entry.path);
    expect(listed.filter((path) => path.startsWith("/invoice") || path.startsWith("/trailing"))).toEqual([]);
    expect(await codeOf(transfers.prepareDownload(session(), { path: "/invoice\u202efdp.exe" }))).toBe("ASSET_PATH_INVALID");
    expect(await codeOf(transfers.prepareDownload(session(), { path: "/trailing. " }))).toBe("ASSET_PATH_INVALID");
  });

  it("refuses a folder where a file is expected, and a file where a folder is expected", async () => {
    expect(await codeOf(transfers.prepareDownload(session(), { path: "/folder" }))).toBe("ASSET_NOT_FILE");
    expect(await codeOf(transfers.prepareUpload(session(), { path: "/folder", sizeBytes: 1 }))).toBe("ASSET_NOT_FILE");
    expect(await codeOf(transfers.prepareUpload(session(), { path: "/file.txt/x", sizeBytes: 1 }))).toBe("ASSET_PATH_INVALID");
    expect(await codeOf(transfers.prepareDownload(session(), { path: "/file.txt/x" }))).toBe("ASSET_NOT_FOUND");
  });

  it("checks again when the request arrives: a symlink swapped in after the ticket is refused", async () => {
    await writeFile(join(assets, "swap.txt"), "in assets");
    const download = await transfers.prepareDownload(session(), { path: "/swap.txt" });
    await rm(join(assets, "swap.txt"));
    await symlink(join(outside, "secret.txt"), join(assets, "swap.txt"));
    const read = await exchange(download.url, { method: "GET", headers: { origin: ORIGIN } });
    expect(read.status).toBe(400);
    expect(read.json()).toMatchObject({ error: { code: "ASSET_PATH_INVALID" } });
    expect(read.body.toString()).not.toContain("outside secret");

    await mkdir(join(assets, "later"));
    const uploadTicket = await transfers.prepareUpload(session(), { path: "/later/x.txt", sizeBytes: 4 });
    await rm(join(assets, "later"), { recursive: true });
    await symlink(outside, join(assets, "later"));
    const written = await exchange(uploadTicket.url, { method: "PUT", body: "evil", headers: { origin: ORIGIN } });
    expect(written.status).toBe(400);
    expect(written.json()).toMatchObject({ error: { code: "ASSET_PATH_INVALID" } });
    await expect(lstat(join(outside, "x.txt"))).rejects.toMatchObject({ code: "ENOENT" });
  });
});
