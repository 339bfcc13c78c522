import { afterEach, describe, expect, it, vi } from "vitest";
import { defaultUploadBody, fetchUploadBody, xhrUploadBody } from "./asset-upload-body.js";
import { TransferServer } from "./testing/transfer-server.js";

/** The slice of XMLHttpRequest the uploader uses, driven by the test. */
class ScriptedXhr {
  static created: ScriptedXhr[] = [];
  opened: [string, string] | undefined;
  sent: unknown;
  aborted = false;
  responseType = "";
  withCredentials = true;
  status = 0;
  responseText = "";
  readonly upload: { onprogress: ((event: { loaded: number }) => void) | null } = { onprogress: null };
  onload: (() => void) | null = null;
  onerror: (() => void) | null = null;
  onabort: (() => void) | null = null;
  ontimeout: (() => void) | null = null;

  constructor() {
    ScriptedXhr.created.push(this);
  }

  open(method: string, url: string): void {
    this.opened = [method, url];
  }

  send(body: unknown): void {
    this.sent = body;
  }

  abort(): void {
    this.aborted = true;
    this.onabort?.();
  }
}

afterEach(() => {
  ScriptedXhr.created = [];
  vi.unstubAllGlobals();
});

describe("the XMLHttpRequest uploader", () => {
  it("PUTs the Blob without credentials, forwards upload progress and resolves with the answer", async () => {
    vi.stubGlobal("XMLHttpRequest", ScriptedXhr);
    expect(defaultUploadBody()).toBe(xhrUploadBody);
    const body = new Blob(["hello"]);
    const progress: number[] = [];
    const answer = xhrUploadBody("http://127.0.0.1:9/transfers/t", body, (loaded) => progress.push(loaded), new AbortController().signal);
    const [request] = ScriptedXhr.created;
    expect(request?.opened).toEqual(["PUT", "http://127.0.0.1:9/transfers/t"]);
    expect([request?.sent, request?.withCredentials, request?.responseType]).toEqual([body, false, "text"]);
    request!.upload.onprogress?.({ loaded: 2 });
    request!.upload.onprogress?.({ loaded: 5 });
    request!.status = 200;
    request!.responseText = '{"path":"/a"}';
    request!.onload?.();
    await expect(answer).resolves.toEqual({ status: 200, body: '{"path":"/a"}' });
    expect(progress).toEqual([2, 5]);
  });

  it("rejects on a network error and on a timeout", async () => {
    vi.stubGlobal("XMLHttpRequest", ScriptedXhr);
    const failed = xhrUploadBody("http://127.0.0.1:9/transfers/t", new Blob(["x"]), () => undefined, new AbortController().signal);
    ScriptedXhr.created[0]!.onerror?.();
    await expect(failed).rejects.toThrow(/connection failed/);
    const timedOut = xhrUploadBody("http://127.0.0.1:9/transfers/t", new Blob(["x"]), () => undefined, new AbortController().signal);
    ScriptedXhr.created[1]!.ontimeout?.();
    await expect(timedOut).rejects.toThrow(/connection failed/);
  });

  it("aborts the request when the signal aborts, and never opens one for an aborted signal", async () => {
    vi.stubGlobal("XMLHttpRequest", ScriptedXhr);
    const controller = new AbortController();
    const uploading = xhrUploadBody("http://127.0.0.1:9/transfers/t", new Blob(["x"]), () => undefined, controller.signal);
    controller.abort();
    await expect(uploading).rejects.toThrow(/aborted/);
    expect(ScriptedXhr.created[0]?.aborted).toBe(true);
    await expect(xhrUploadBody("http://127.0.0.1:9/transfers/t", new Blob(["x"]), () => undefined, AbortSignal.abort())).rejects.toThrow(/aborted/);
    expect(ScriptedXhr.created).toHaveLength(1);
  });
});

describe("the fetch uploader (where there is no XMLHttpRequest)", () => {
  it("is the default without XMLHttpRequest, PUTs the body and returns any answer", async () => {
    expect(defaultUploadBody()).toBe(fetchUploadBody);
    const server = await TransferServer.start();
    try {
      const { url } = server.ticket((transfer) => ({ status: 409, body: `got ${transfer.body.byteLength} bytes` }));
      const answer = await fetchUploadBody(url, new Blob(["four"], { type: "text/csv" }), () => undefined, new AbortController().signal);
      expect(answer).toEqual({ status: 409, body: "got 4 bytes" });
      expect([server.transfers[0]?.method, server.transfers[0]?.headers["content-type"]]).toEqual(["PUT", "text/csv"]);
    } finally {
      await server.close();
    }
  });
});
