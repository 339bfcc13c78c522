import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { MAX_ASSET_BYTES, MAX_ASSET_TEXT_BYTES } from "@pedelec/protocol/assets";
import { DEFAULT_EXTENSION_ID } from "@pedelec/protocol/extension-id";
import { DISGUISING_ASSET_PATHS } from "@pedelec/protocol/testing/disguising-asset-paths";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import type { UploadBody } from "./asset-upload-body.js";
import { Bridge } from "./bridge.js";
import { Pedelec } from "./pedelec.js";
import { SessionAssets } from "./session-assets.js";
import { errorOf } from "./testing/error-of.js";
import { FakeExtension, NO_REPLY } from "./testing/fake-extension.js";
import { TransferServer, type TransferReply } from "./testing/transfer-server.js";
import type { AssetUploadProgress } from "./types.js";

const SESSION_ID = "session-0001";
const EXPIRES_AT = "2025-01-01T00:01:00.000Z";
const MODIFIED_AT = "2025-03-04T05:06:07.000Z";

let server: TransferServer;

beforeEach(async () => {
  server = await TransferServer.start();
});

afterEach(async () => {
  vi.unstubAllGlobals();
  await server.close();
});

async function openSession() {
  const extension = new FakeExtension().install();
  const session = await new Pedelec().createSession({ provider: "claude" });
  return { extension, session };
}

/** The asset transfers of a session with a scripted upload body sender (the seam in front of XMLHttpRequest). */
function openAssets(uploadBody: UploadBody, now?: () => number) {
  const extension = new FakeExtension().install();
  const bridge = new Bridge({ extensionId: DEFAULT_EXTENSION_ID, timeoutMs: 5_000 });
  const assets = new SessionAssets({
    sessionId: SESSION_ID,
    bridge,
    ready: () => Promise.resolve(),
    refusal: () => undefined,
    uploadBody,
    ...(now === undefined ? {} : { now }),
  });
  return { extension, assets };
}

/** Core's side of one upload: a ticket on the test server answering `reply`. */
function offerUpload(extension: FakeExtension, reply: (body: Buffer) => TransferReply) {
  const transfer = server.ticket((recorded) => reply(recorded.body));
  extension.handle("prepareAssetUpload", () => ({ url: transfer.url, expiresAt: EXPIRES_AT }));
  return transfer;
}

function receipt(path: string, sizeBytes: number): TransferReply {
  return { status: 200, body: JSON.stringify({ path, sizeBytes, modifiedAt: MODIFIED_AT }) };
}

/** Core's side of one download: the asset's description, and a ticket answering `reply`. */
function offerDownload(extension: FakeExtension, described: { sizeBytes: number; mimeType?: string; modifiedAt?: string }, reply: TransferReply) {
  const transfer = server.ticket(() => reply);
  extension.handle("prepareAssetDownload", () => ({
    url: transfer.url,
    expiresAt: EXPIRES_AT,
    mimeType: "application/octet-stream",
    modifiedAt: MODIFIED_AT,
    ...described,
  }));
  return transfer;
}

function errorBody(code: string, message: string): string {
  return JSON.stringify({ error: { code, message } });
}

/** Neither the message nor the details of an error may carry the transfer URL, its port or its ticket. */
function expectNoTransferSecrets(error: PedelecError, ticket: string): void {
  const visible = JSON.stringify({ message: error.message, details: error.details ?? null });
  expect(visible).not.toContain(ticket);
  expect(visible).not.toContain(`:${server.port}`);
  expect(visible).not.toContain("/transfers/");
}

/** Lets queued port messages (microtasks) and their answers go through. */
async function flushMessages(): Promise<void> {
  for (let round = 0; round < 10; round += 1) await new Promise((resolve) => setTimeout(resolve, 0));
}

/** A stand-in for a Blob bigger than any test wants to allocate. */
function hugeBlob(sizeBytes: number): Blob {
  return { size: sizeBytes, type: "", slice: () => new Blob(), stream: () => new Blob().stream(), name: "huge.bin" } as unknown as Blob;
}

describe("session.uploadAsset", () => {
  it("uploads a File to /<name>, sends its bytes and type, and resolves with the receipt's path", async () => {
    const { extension, session } = await openSession();
    const bytes = new TextEncoder().encode("milk, eggs, flour\n");
    offerUpload(extension, (body) => receipt("/groceries.txt", body.byteLength));
    const progress: AssetUploadProgress[] = [];
    const file = new File([bytes], "groceries.txt", { type: "text/plain" });
    const path = await session.uploadAsset(file, undefined, { onProgress: (report) => progress.push(report) });
    expect(path).toBe("/groceries.txt");
    expect(extension.requestsOf("prepareAssetUpload").map((request) => request.payload)).toEqual([
      { sessionId: SESSION_ID, path: "/groceries.txt", sizeBytes: bytes.byteLength, mimeType: "text/plain" },
    ]);
    const [transfer] = server.transfers;
    expect(transfer?.method).toBe("PUT");
    expect(new Uint8Array(transfer!.body)).toEqual(bytes);
    expect(transfer?.headers["content-type"]).toBe("text/plain");
    expect(transfer?.headers.cookie).toBeUndefined();
    // No progress events without XMLHttpRequest, but the final 100% still arrives.
    expect(progress).toEqual([{ loadedBytes: bytes.byteLength, totalBytes: bytes.byteLength }]);
  });

  it("uploads a Blob to the target path asked for, without a mimeType when the Blob has none", async () => {
    const { extension, session } = await openSession();
    offerUpload(extension, (body) => receipt("/inbox/data.bin", body.byteLength));
    await expect(session.uploadAsset(new Blob([new Uint8Array([0, 1, 2, 255])]), "/inbox/data.bin")).resolves.toBe("/inbox/data.bin");
    expect(extension.requestsOf("prepareAssetUpload")[0]?.payload).toEqual({ sessionId: SESSION_ID, path: "/inbox/data.bin", sizeBytes: 4 });
    expect([...server.transfers[0]!.body]).toEqual([0, 1, 2, 255]);
  });

  it("uploads an empty file", async () => {
    const { extension, session } = await openSession();
    offerUpload(extension, (body) => receipt("/empty.txt", body.byteLength));
    const progress: AssetUploadProgress[] = [];
    await expect(session.uploadAsset(new File([], "empty.txt"), undefined, { onProgress: (report) => progress.push(report) })).resolves.toBe(
      "/empty.txt",
    );
    expect(progress).toEqual([{ loadedBytes: 0, totalBytes: 0 }]);
  });

  it("asks for a targetPath when a Blob has no name, and refuses what is not a Blob, without sending anything", async () => {
    const { extension, session } = await openSession();
    const nameless = await errorOf(session.uploadAsset(new Blob(["x"])));
    expect(nameless.code).toBe("INVALID_INPUT");
    expect(nameless.message).toMatch(/targetPath/);
    for (const bad of ["text", null, { size: 1 }]) {
      expect((await errorOf(session.uploadAsset(bad as unknown as Blob, "/x.txt"))).code).toBe("INVALID_INPUT");
    }
    expect((await errorOf(session.uploadAsset(new Blob(["x"]), 42 as unknown as string))).code).toBe("INVALID_INPUT");
    expect((await errorOf(session.uploadAsset(new Blob(["x"]), "/x.txt", { onProgress: "50%" as never }))).code).toBe("INVALID_INPUT");
    expect((await errorOf(session.uploadAsset(new Blob(["x"]), "/x.txt", { signal: "stop" as never }))).code).toBe("INVALID_INPUT");
    await flushMessages();
    expect(extension.requestsOf("prepareAssetUpload")).toEqual([]);
  });

  it("refuses bidi controls, invisible format characters and names ending in a space or a dot, as Core does", async () => {
    const { extension, session } = await openSession();
    for (const [label, path] of DISGUISING_ASSET_PATHS) {
      const uploadError = await errorOf(session.uploadAsset(new Blob(["x"]), path));
      expect(uploadError.code, label).toBe("ASSET_PATH_INVALID");
      // The message shows the path with its invisible characters escaped, so it cannot disguise itself either.
      expect(uploadError.message, label).not.toMatch(/[\p{Cf}]/u);
      expect((await errorOf(session.readAsset(path, "text"))).code, label).toBe("ASSET_PATH_INVALID");
    }
    // A file's own name is the default path, and is checked the same way.
    expect((await errorOf(session.uploadAsset(new File(["x"], "invoice\u202efdp.exe")))).code).toBe("ASSET_PATH_INVALID");
    expect((await errorOf(session.uploadAsset(new File(["x"], "report.txt.")))).code).toBe("ASSET_PATH_INVALID");
    await flushMessages();
    expect(extension.requestsOf("prepareAssetUpload")).toEqual([]);
    expect(extension.requestsOf("prepareAssetDownload")).toEqual([]);
  });

  it("refuses invalid paths with ASSET_PATH_INVALID before anything is sent", async () => {
    const { extension, session } = await openSession();
    const invalid = ["notes.txt", "/", "/a//b", "/a/./b", "/a/../b", "/a\\b", "/.pedelec-runtime/x", "/a\u0000b", "/a\uFF0Fb", "/a/"];
    for (const path of invalid) {
      const error = await errorOf(session.uploadAsset(new Blob(["x"]), path));
      expect(error.code, path).toBe("ASSET_PATH_INVALID");
    }
    // The default path comes from the file's name and is checked the same way.
    expect((await errorOf(session.uploadAsset(new File(["x"], "..")))).code).toBe("ASSET_PATH_INVALID");
    await flushMessages();
    expect(extension.requestsOf("prepareAssetUpload")).toEqual([]);
  });

  it("refuses a file over 100 MiB with ASSET_TOO_LARGE before anything is sent, and takes one of exactly 100 MiB", async () => {
    const { extension, session } = await openSession();
    const error = await errorOf(session.uploadAsset(hugeBlob(MAX_ASSET_BYTES + 1), "/huge.bin"));
    expect(error.code).toBe("ASSET_TOO_LARGE");
    expect(error.details).toEqual({ sizeBytes: MAX_ASSET_BYTES + 1, maxBytes: MAX_ASSET_BYTES });
    await flushMessages();
    expect(extension.requestsOf("prepareAssetUpload")).toEqual([]);
    extension.handle("prepareAssetUpload", () => {
      throw new PedelecError("SESSION_BUSY", "Another upload of this session is running");
    });
    // At the limit the SDK asks Core (whose answer here is a refusal, so no body is ever read).
    expect((await errorOf(session.uploadAsset(hugeBlob(MAX_ASSET_BYTES), "/huge.bin"))).code).toBe("SESSION_BUSY");
    expect(extension.requestsOf("prepareAssetUpload")[0]?.payload).toMatchObject({ sizeBytes: MAX_ASSET_BYTES });
    expect(server.transfers).toEqual([]);
  });

  it("rejects with the code and message of the asset server's error answer", async () => {
    const { extension, session } = await openSession();
    const answers = [
      [410, "ASSET_UPLOAD_TICKET_EXPIRED", "The upload ticket expired"],
      [403, "ASSET_UPLOAD_UNAUTHORIZED", "The upload ticket is not valid"],
      [409, "ASSET_NOT_FILE", "A folder is in the way"],
      [400, "ASSET_UPLOAD_SIZE_MISMATCH", "The body was shorter than declared"],
      [413, "ASSET_TOO_LARGE", "The body was longer than declared"],
    ] as const;
    for (const [status, code, message] of answers) {
      const { ticket } = offerUpload(extension, () => ({ status, body: errorBody(code, message) }));
      const error = await errorOf(session.uploadAsset(new File(["data"], "a.txt")));
      expect([error.code, error.message]).toEqual([code, message]);
      expectNoTransferSecrets(error, ticket);
    }
  });

  it("turns an answer that is not Pedelec's error JSON into ASSET_UPLOAD_FAILED naming only the status", async () => {
    const { extension, session } = await openSession();
    const { ticket } = offerUpload(extension, () => ({ status: 502, body: "<html>Bad gateway</html>", contentType: "text/html" }));
    const error = await errorOf(session.uploadAsset(new File(["data"], "a.txt")));
    expect(error.code).toBe("ASSET_UPLOAD_FAILED");
    expect(error.message).toMatch(/HTTP 502/);
    expectNoTransferSecrets(error, ticket);
  });

  it("rejects an invalid receipt with SDK_PROTOCOL_ERROR", async () => {
    const { extension, session } = await openSession();
    for (const body of ["not json", JSON.stringify({ path: "/a.txt" }), JSON.stringify({ path: 1, sizeBytes: 4, modifiedAt: MODIFIED_AT })]) {
      const { ticket } = offerUpload(extension, () => ({ status: 200, body }));
      const error = await errorOf(session.uploadAsset(new File(["data"], "a.txt")));
      expect(error.code, body).toBe("SDK_PROTOCOL_ERROR");
      expectNoTransferSecrets(error, ticket);
    }
  });

  it("rejects with ASSET_UPLOAD_SERVER_UNAVAILABLE when the connection breaks or nobody listens", async () => {
    const { extension, session } = await openSession();
    const dropped = offerUpload(extension, () => ({ dropConnection: true }));
    const brokenOff = await errorOf(session.uploadAsset(new File(["data"], "a.txt")));
    expect(brokenOff.code).toBe("ASSET_UPLOAD_SERVER_UNAVAILABLE");
    expectNoTransferSecrets(brokenOff, dropped.ticket);
    const gone = offerUpload(extension, () => receipt("/a.txt", 4));
    await server.close();
    const unreachable = await errorOf(session.uploadAsset(new File(["data"], "a.txt")));
    expect(unreachable.code).toBe("ASSET_UPLOAD_SERVER_UNAVAILABLE");
    expectNoTransferSecrets(unreachable, gone.ticket);
    server = await TransferServer.start();
  });

  it("passes on a refused prepare and sends no body", async () => {
    const { extension, session } = await openSession();
    extension.handle("prepareAssetUpload", () => {
      throw new PedelecError("SESSION_BUSY", "Another upload of this session is running");
    });
    expect((await errorOf(session.uploadAsset(new File(["data"], "a.txt")))).code).toBe("SESSION_BUSY");
    expect(server.transfers).toEqual([]);
  });

  it("refuses with SESSION_ENDED without sending once the session ended or is ending", async () => {
    const { extension, session } = await openSession();
    extension.handle("endSession", () => NO_REPLY);
    void session.end().catch(() => undefined);
    expect((await errorOf(session.uploadAsset(new File(["data"], "a.txt")))).code).toBe("SESSION_ENDED");
    expect((await errorOf(session.listAssets())).code).toBe("SESSION_ENDED");
    expect((await errorOf(session.readAsset("/a.txt", "text"))).code).toBe("SESSION_ENDED");
    await flushMessages();
    expect(extension.requests.filter((request) => /Asset/.test(request.type))).toEqual([]);
  });

  it("fails a pending upload with SESSION_ENDED when the session ends, and stops its body", async () => {
    const { extension, session } = await openSession();
    extension.handle("prepareAssetUpload", () => NO_REPLY);
    const uploading = session.uploadAsset(new File(["data"], "a.txt"));
    await extension.waitForRequest("prepareAssetUpload");
    await session.end();
    expect((await errorOf(uploading)).code).toBe("SESSION_ENDED");
  });
});

describe("upload through the body sender", () => {
  it("reports progress at most every 50 ms, never backwards, then 100% once", async () => {
    let clock = 1_000;
    const uploadBody: UploadBody = async (_url, body, onProgress) => {
      for (const [at, loaded] of [
        [1_000, 10],
        [1_020, 20],
        [1_049, 30],
        [1_050, 40],
        [1_060, 35],
        [1_200, 90],
        [1_210, 100],
      ] as const) {
        clock = at;
        onProgress(loaded);
      }
      return { status: 200, body: JSON.stringify({ path: "/a.bin", sizeBytes: body.size, modifiedAt: MODIFIED_AT }) };
    };
    const { extension, assets } = openAssets(uploadBody, () => clock);
    extension.handle("prepareAssetUpload", () => ({ url: "http://127.0.0.1:1/transfers/abc", expiresAt: EXPIRES_AT }));
    const progress: AssetUploadProgress[] = [];
    const path = await assets.upload(new Blob([new Uint8Array(100)]), "/a.bin", { onProgress: (report) => progress.push(report) });
    expect(path).toBe("/a.bin");
    expect(progress.map((report) => report.loadedBytes)).toEqual([10, 40, 90, 100]);
    expect(progress.every((report) => report.totalBytes === 100)).toBe(true);
  });

  it("hands the body sender the prepared URL, the file and a live signal", async () => {
    const calls: Array<{ url: string; body: Blob; aborted: boolean }> = [];
    const { extension, assets } = openAssets(async (url, body, _onProgress, signal) => {
      calls.push({ url, body, aborted: signal.aborted });
      return { status: 200, body: JSON.stringify({ path: "/a.txt", sizeBytes: body.size, modifiedAt: MODIFIED_AT }) };
    });
    extension.handle("prepareAssetUpload", () => ({ url: "http://127.0.0.1:1/transfers/abc", expiresAt: EXPIRES_AT }));
    const file = new File(["hello"], "a.txt");
    await assets.upload(file, undefined, undefined);
    expect(calls).toEqual([{ url: "http://127.0.0.1:1/transfers/abc", body: file, aborted: false }]);
  });

  it("keeps uploading when onProgress throws, and reports the callback's error", async () => {
    const reported: unknown[] = [];
    const { extension, assets } = openAssets(async (_url, body, onProgress) => {
      onProgress(1);
      return { status: 200, body: JSON.stringify({ path: "/a.txt", sizeBytes: body.size, modifiedAt: MODIFIED_AT }) };
    });
    vi.stubGlobal("reportError", (error: unknown) => reported.push(error));
    extension.handle("prepareAssetUpload", () => ({ url: "http://127.0.0.1:1/transfers/abc", expiresAt: EXPIRES_AT }));
    const onProgress = (): void => {
      throw new Error("render failed");
    };
    await expect(assets.upload(new File(["hello"], "a.txt"), undefined, { onProgress })).resolves.toBe("/a.txt");
    expect(reported).toHaveLength(2);
  });

  it("on abort rejects with ASSET_UPLOAD_FAILED at once and stops the body", async () => {
    let bodySignal: AbortSignal | undefined;
    const { extension, assets } = openAssets(
      (_url, _body, _onProgress, signal) =>
        new Promise((_resolve, reject) => {
          bodySignal = signal;
          signal.addEventListener("abort", () => reject(new Error("aborted")));
        }),
    );
    extension.handle("prepareAssetUpload", () => ({ url: "http://127.0.0.1:1/transfers/abc", expiresAt: EXPIRES_AT }));
    const controller = new AbortController();
    const uploading = assets.upload(new File(["hello"], "a.txt"), undefined, { signal: controller.signal });
    await vi.waitFor(() => expect(bodySignal).toBeDefined(), { timeout: 2_000 });
    controller.abort("the user closed the dialog");
    const error = await errorOf(uploading);
    expect([error.code, error.message]).toEqual(["ASSET_UPLOAD_FAILED", "The upload was cancelled"]);
    expect(error.details).toEqual({ reason: "the user closed the dialog" });
    expect(bodySignal?.aborted).toBe(true);
  });

  it("stops the body and rejects with the session's error when the session ends mid-upload", async () => {
    let bodySignal: AbortSignal | undefined;
    const { extension, assets } = openAssets(
      (_url, _body, _onProgress, signal) =>
        new Promise((_resolve, reject) => {
          bodySignal = signal;
          signal.addEventListener("abort", () => reject(new Error("aborted")));
        }),
    );
    extension.handle("prepareAssetUpload", () => ({ url: "http://127.0.0.1:1/transfers/abc", expiresAt: EXPIRES_AT }));
    const uploading = assets.upload(new File(["hello"], "a.txt"), undefined, undefined);
    await vi.waitFor(() => expect(bodySignal).toBeDefined(), { timeout: 2_000 });
    assets.failAll(new PedelecError("SESSION_ENDED", "The session has ended"));
    expect((await errorOf(uploading)).code).toBe("SESSION_ENDED");
    expect(bodySignal?.aborted).toBe(true);
  });

  it("sends nothing for an already-aborted signal, and no body when aborted while preparing", async () => {
    const uploadBody = vi.fn<UploadBody>();
    const { extension, assets } = openAssets(uploadBody);
    const aborted = new AbortController();
    aborted.abort();
    expect((await errorOf(assets.upload(new File(["x"], "a.txt"), undefined, { signal: aborted.signal }))).code).toBe("ASSET_UPLOAD_FAILED");
    await flushMessages();
    expect(extension.requestsOf("prepareAssetUpload")).toEqual([]);

    let answerPrepare: (() => void) | undefined;
    extension.handle(
      "prepareAssetUpload",
      () => new Promise((resolve) => (answerPrepare = () => resolve({ url: "http://127.0.0.1:1/transfers/abc", expiresAt: EXPIRES_AT }))),
    );
    const controller = new AbortController();
    const uploading = assets.upload(new File(["x"], "a.txt"), undefined, { signal: controller.signal });
    await extension.waitForRequest("prepareAssetUpload");
    controller.abort();
    expect((await errorOf(uploading)).code).toBe("ASSET_UPLOAD_FAILED");
    answerPrepare?.();
    await flushMessages();
    expect(uploadBody).not.toHaveBeenCalled();
  });

  it("maps a body sender that fails without an answer to ASSET_UPLOAD_SERVER_UNAVAILABLE", async () => {
    const { extension, assets } = openAssets(() => Promise.reject(new TypeError("Failed to fetch http://127.0.0.1:1/transfers/abc")));
    extension.handle("prepareAssetUpload", () => ({ url: "http://127.0.0.1:1/transfers/abc", expiresAt: EXPIRES_AT }));
    const error = await errorOf(assets.upload(new File(["x"], "a.txt"), undefined, undefined));
    expect(error.code).toBe("ASSET_UPLOAD_SERVER_UNAVAILABLE");
    expect(JSON.stringify([error.message, error.details])).not.toContain("transfers/abc");
  });
});

describe("session.listAssets", () => {
  it("asks Core for the session's assets and resolves with them", async () => {
    const { extension, session } = await openSession();
    const entries = [
      { name: "b.txt", path: "/b.txt", sizeBytes: 3, modifiedAt: "2025-01-02T00:00:00.000Z" },
      { name: "a.png", path: "/images/a.png", sizeBytes: 1024, modifiedAt: "2025-01-01T00:00:00.000Z" },
    ];
    extension.handle("listAssets", () => entries);
    await expect(session.listAssets()).resolves.toEqual(entries);
    expect(extension.requestsOf("listAssets")[0]?.payload).toEqual({ sessionId: SESSION_ID });
  });

  it("rejects an invalid answer with SDK_PROTOCOL_ERROR and passes on Core's refusal", async () => {
    const { extension, session } = await openSession();
    extension.handle("listAssets", () => [{ name: "a.txt", path: "/a.txt", sizeBytes: -1, modifiedAt: MODIFIED_AT }]);
    expect((await errorOf(session.listAssets())).code).toBe("SDK_PROTOCOL_ERROR");
    extension.handle("listAssets", () => {
      throw new PedelecError("ASSET_LIST_FAILED", "The assets folder could not be read");
    });
    const error = await errorOf(session.listAssets());
    expect([error.code, error.message]).toEqual(["ASSET_LIST_FAILED", "The assets folder could not be read"]);
  });
});

describe("session.readAsset", () => {
  it("reads text with a plain GET: no credentials, no custom headers", async () => {
    const { extension, session } = await openSession();
    const text = "Grüße, 世界 🚲\n";
    const bytes = new TextEncoder().encode(text);
    offerDownload(extension, { sizeBytes: bytes.byteLength, mimeType: "text/plain" }, { status: 200, body: bytes, contentType: "text/plain" });
    await expect(session.readAsset("/notes/hello.txt", "text")).resolves.toBe(text);
    expect(extension.requestsOf("prepareAssetDownload")[0]?.payload).toEqual({ sessionId: SESSION_ID, path: "/notes/hello.txt" });
    const [transfer] = server.transfers;
    expect(transfer?.method).toBe("GET");
    expect(transfer?.headers["content-type"]).toBeUndefined();
    expect(transfer?.headers.cookie).toBeUndefined();
    expect(transfer?.headers.authorization).toBeUndefined();
    expect(Object.keys(transfer!.headers).filter((name) => name.startsWith("x-"))).toEqual([]);
  });

  it("parses JSON, and refuses JSON that does not parse with ASSET_INVALID_JSON", async () => {
    const { extension, session } = await openSession();
    const good = JSON.stringify({ cards: [{ title: "milk", done: false }], count: 1 });
    offerDownload(extension, { sizeBytes: Buffer.byteLength(good) }, { status: 200, body: good });
    await expect(session.readAsset("/board.json", "json")).resolves.toEqual({ cards: [{ title: "milk", done: false }], count: 1 });
    offerDownload(extension, { sizeBytes: 9 }, { status: 200, body: "{cards: 1" });
    const error = await errorOf(session.readAsset("/board.json", "json"));
    expect(error.code).toBe("ASSET_INVALID_JSON");
    expect(error.message).toMatch(/\/board\.json/);
  });

  it("refuses bytes that are not UTF-8 with ASSET_TEXT_DECODE_FAILED, for text and JSON", async () => {
    const { extension, session } = await openSession();
    for (const kind of ["text", "json"] as const) {
      const bytes = new Uint8Array([0x22, 0xc3, 0x28, 0x22]);
      offerDownload(extension, { sizeBytes: bytes.byteLength }, { status: 200, body: bytes });
      expect((await errorOf(session.readAsset("/latin1.txt", kind))).code, kind).toBe("ASSET_TEXT_DECODE_FAILED");
    }
  });

  it("refuses text and JSON reads over 16 MiB with ASSET_READ_TOO_LARGE before downloading", async () => {
    const { extension, session } = await openSession();
    for (const kind of ["text", "json"] as const) {
      offerDownload(extension, { sizeBytes: MAX_ASSET_TEXT_BYTES + 1 }, { status: 200, body: "never read" });
      const error = await errorOf(session.readAsset("/big.log", kind));
      expect(error.code).toBe("ASSET_READ_TOO_LARGE");
      expect(error.details).toEqual({ sizeBytes: MAX_ASSET_TEXT_BYTES + 1, maxBytes: MAX_ASSET_TEXT_BYTES });
    }
    expect(server.transfers).toEqual([]);
  });

  it("reads a File named by the last segment, with Core's MIME type and modification time", async () => {
    const { extension, session } = await openSession();
    const bytes = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0, 255]);
    offerDownload(extension, { sizeBytes: bytes.byteLength, mimeType: "image/png" }, { status: 200, body: bytes, contentType: "image/png" });
    const file = await session.readAsset("/charts/q1.png", "file");
    expect(file).toBeInstanceOf(File);
    expect([file.name, file.type, file.lastModified, file.size]).toEqual(["q1.png", "image/png", Date.parse(MODIFIED_AT), 6]);
    expect(new Uint8Array(await file.arrayBuffer())).toEqual(bytes);
  });

  it("rejects a body longer or shorter than the asset's size with ASSET_READ_FAILED", async () => {
    const { extension, session } = await openSession();
    for (const kind of ["text", "file"] as const) {
      for (const [sizeBytes, body] of [
        [3, "longer than said"],
        [30, "shorter"],
      ] as const) {
        const { ticket } = offerDownload(extension, { sizeBytes }, { status: 200, body, chunked: true });
        const error = await errorOf(session.readAsset("/a.txt", kind));
        expect(error.code, `${kind} ${sizeBytes}`).toBe("ASSET_READ_FAILED");
        expectNoTransferSecrets(error, ticket);
      }
    }
  });

  it("rejects with the code and message of the asset server's error answer", async () => {
    const { extension, session } = await openSession();
    const answers = [
      [404, "ASSET_NOT_FOUND", "No asset at /a.txt"],
      [409, "ASSET_NOT_FILE", "/a.txt is a folder"],
      [410, "ASSET_DOWNLOAD_TICKET_EXPIRED", "The download ticket expired"],
      [403, "ASSET_DOWNLOAD_UNAUTHORIZED", "The download ticket is not valid"],
      [500, "ASSET_READ_FAILED", "The file could not be read"],
    ] as const;
    for (const [status, code, message] of answers) {
      const { ticket } = offerDownload(extension, { sizeBytes: 4 }, { status, body: errorBody(code, message) });
      const error = await errorOf(session.readAsset("/a.txt", "file"));
      expect([error.code, error.message]).toEqual([code, message]);
      expectNoTransferSecrets(error, ticket);
    }
    const { ticket } = offerDownload(extension, { sizeBytes: 4 }, { status: 500, body: "oops", contentType: "text/plain" });
    const error = await errorOf(session.readAsset("/a.txt", "text"));
    expect(error.code).toBe("ASSET_READ_FAILED");
    expect(error.message).toMatch(/HTTP 500/);
    expectNoTransferSecrets(error, ticket);
  });

  it("passes on Core's refusal of the download", async () => {
    const { extension, session } = await openSession();
    extension.handle("prepareAssetDownload", () => {
      throw new PedelecError("ASSET_NOT_FOUND", "No asset at /missing.txt");
    });
    expect((await errorOf(session.readAsset("/missing.txt", "text"))).code).toBe("ASSET_NOT_FOUND");
    expect(server.transfers).toEqual([]);
  });

  it("rejects with ASSET_READ_FAILED when the connection breaks or nobody listens", async () => {
    const { extension, session } = await openSession();
    const dropped = offerDownload(extension, { sizeBytes: 4 }, { dropConnection: true });
    const brokenOff = await errorOf(session.readAsset("/a.txt", "text"));
    expect(brokenOff.code).toBe("ASSET_READ_FAILED");
    expectNoTransferSecrets(brokenOff, dropped.ticket);
    const gone = offerDownload(extension, { sizeBytes: 4 }, { status: 200, body: "data" });
    await server.close();
    const unreachable = await errorOf(session.readAsset("/a.txt", "file"));
    expect(unreachable.code).toBe("ASSET_READ_FAILED");
    expectNoTransferSecrets(unreachable, gone.ticket);
    server = await TransferServer.start();
  });

  it("refuses invalid paths and read kinds before anything is sent", async () => {
    const { extension, session } = await openSession();
    for (const path of ["a.txt", "/a/../b", "/a//b", "/.pedelec-upload-1", "/a\\b", 7]) {
      expect((await errorOf(session.readAsset(path as string, "text"))).code, String(path)).toBe("ASSET_PATH_INVALID");
    }
    expect((await errorOf(session.readAsset("/a.txt", "binary" as "text"))).code).toBe("INVALID_INPUT");
    expect((await errorOf(session.readAsset("/a.txt", "text", { signal: {} as AbortSignal }))).code).toBe("INVALID_INPUT");
    await flushMessages();
    expect(extension.requestsOf("prepareAssetDownload")).toEqual([]);
  });

  it("on abort rejects with ASSET_READ_FAILED at once; an already-aborted signal sends nothing", async () => {
    const { extension, session } = await openSession();
    extension.handle("prepareAssetDownload", () => NO_REPLY);
    const controller = new AbortController();
    const reading = session.readAsset("/a.txt", "text", { signal: controller.signal });
    await extension.waitForRequest("prepareAssetDownload");
    controller.abort(new Error("navigated away"));
    const error = await errorOf(reading);
    expect([error.code, error.message, error.details]).toEqual(["ASSET_READ_FAILED", "The read was cancelled", { reason: "navigated away" }]);
    expect((await errorOf(session.readAsset("/a.txt", "file", { signal: AbortSignal.abort() }))).code).toBe("ASSET_READ_FAILED");
    await flushMessages();
    expect(extension.requestsOf("prepareAssetDownload")).toHaveLength(1);
  });
});
