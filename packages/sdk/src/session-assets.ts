import { assetPathProblem, MAX_ASSET_BYTES, MAX_ASSET_TEXT_BYTES, printableAssetPath } from "@pedelec/protocol/assets";
import type { ErrorCode } from "@pedelec/protocol/error-codes";
import type { PageRequestPayload, PageRequestResult } from "@pedelec/protocol/page-wire";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { errorFromAnswer, isSuccess, parseUploadReceipt, readBlobBody, readExactBody } from "./asset-answers.js";
import { defaultUploadBody, type UploadBody, type UploadResponse } from "./asset-upload-body.js";
import type { Bridge } from "./bridge.js";
import { UploadProgress } from "./upload-progress.js";
import type { AssetEntry, AssetReadKind, AssetReadOptions, AssetUploadOptions, JsonValue } from "./types.js";

/** What a session hands the keeper of its asset transfers. */
export interface SessionAssetsInit {
  readonly sessionId: string;
  readonly bridge: Bridge;
  /** Resolves once the live extension port follows the session (after a lost port it resubscribes first). */
  readonly ready: () => Promise<void>;
  /** Why no transfer may start now (the session ended), or undefined. */
  readonly refusal: () => PedelecError | undefined;
  /** Sends an upload's body; by default XMLHttpRequest (for progress events), or fetch where there is none. */
  readonly uploadBody?: UploadBody;
  /** The clock of the progress throttle. */
  readonly now?: () => number;
}

const READ_KINDS: ReadonlySet<unknown> = new Set<AssetReadKind>(["text", "json", "file"]);
const MAX_MIME_TYPE_LENGTH = 255;

/**
 * The page's side of a session's assets. Core hands out a single-use URL per transfer; the body then goes straight
 * to Core's loopback asset server over HTTP, never through the extension. The URL stays in here: nothing returned
 * or thrown carries it. Pending transfers fail with the session's error when it ends.
 */
export class SessionAssets {
  readonly #init: SessionAssetsInit;
  readonly #pending = new Set<(error: PedelecError) => void>();

  constructor(init: SessionAssetsInit) {
    this.#init = init;
  }

  upload(file: Blob, targetPath: string | undefined, options: AssetUploadOptions | undefined): Promise<string> {
    const refusal = this.#init.refusal();
    if (refusal !== undefined) return Promise.reject(refusal);
    let checked: { path: string; signal: AbortSignal | undefined; onProgress: AssetUploadOptions["onProgress"] };
    try {
      checked = checkUpload(file, targetPath, options);
    } catch (error) {
      return Promise.reject(error);
    }
    const { path, signal, onProgress } = checked;
    const mimeType = typeof file.type === "string" && file.type.length > 0 && file.type.length <= MAX_MIME_TYPE_LENGTH ? file.type : undefined;
    const payload = { sessionId: this.#init.sessionId, path, sizeBytes: file.size, ...(mimeType === undefined ? {} : { mimeType }) };
    return this.#perform(signal, cancelled("upload", "ASSET_UPLOAD_FAILED"), "ASSET_UPLOAD_FAILED", async (transferSignal) => {
      const transfer = await this.#prepare("prepareAssetUpload", payload, transferSignal);
      const progress = new UploadProgress(file.size, onProgress?.bind(options), this.#init.now);
      const uploadBody = this.#init.uploadBody ?? defaultUploadBody();
      let response: UploadResponse;
      try {
        response = await uploadBody(transfer.url, file, (loadedBytes) => progress.report(loadedBytes), transferSignal);
      } catch {
        transferSignal.throwIfAborted();
        throw new PedelecError(
          "ASSET_UPLOAD_SERVER_UNAVAILABLE",
          "The Pedelec Desktop's asset server could not be reached, or the connection broke during the upload",
        );
      }
      if (!isSuccess(response.status)) throw errorFromAnswer(response.status, response.body, "ASSET_UPLOAD_FAILED", "upload");
      const receipt = parseUploadReceipt(response.body);
      progress.finish();
      return receipt.path;
    });
  }

  list(): Promise<AssetEntry[]> {
    const refusal = this.#init.refusal();
    if (refusal !== undefined) return Promise.reject(refusal);
    return this.#perform(undefined, cancelled("listing", "ASSET_LIST_FAILED"), "ASSET_LIST_FAILED", async (signal) => {
      await this.#init.ready();
      signal.throwIfAborted();
      // The bridge checks the answer against the protocol's schema (SDK_PROTOCOL_ERROR otherwise).
      const answer = await this.#init.bridge.request("listAssets", { sessionId: this.#init.sessionId });
      return answer.result;
    });
  }

  read(path: string, kind: AssetReadKind, options: AssetReadOptions | undefined): Promise<string | JsonValue | File> {
    const refusal = this.#init.refusal();
    if (refusal !== undefined) return Promise.reject(refusal);
    let signal: AbortSignal | undefined;
    try {
      checkPath(path);
      if (!READ_KINDS.has(kind)) {
        throw new PedelecError("INVALID_INPUT", `readAsset reads as "text", "json" or "file", not ${describe(kind)}`);
      }
      signal = checkSignal(options, "readAsset");
    } catch (error) {
      return Promise.reject(error);
    }
    const payload = { sessionId: this.#init.sessionId, path };
    return this.#perform(signal, cancelled("read", "ASSET_READ_FAILED"), "ASSET_READ_FAILED", async (transferSignal) => {
      const transfer = await this.#prepare("prepareAssetDownload", payload, transferSignal);
      if (kind !== "file" && transfer.sizeBytes > MAX_ASSET_TEXT_BYTES) {
        throw new PedelecError(
          "ASSET_READ_TOO_LARGE",
          `The asset is ${transfer.sizeBytes} bytes; ${kind} reads take at most ${MAX_ASSET_TEXT_BYTES} bytes (read it as a file instead)`,
          { sizeBytes: transfer.sizeBytes, maxBytes: MAX_ASSET_TEXT_BYTES },
        );
      }
      const response = await download(transfer.url, transferSignal);
      if (kind === "file") {
        const blob = await readBlobBody(response, transfer.sizeBytes);
        const lastModified = Date.parse(transfer.modifiedAt);
        return new File([blob], path.slice(path.lastIndexOf("/") + 1), {
          type: transfer.mimeType,
          ...(Number.isFinite(lastModified) ? { lastModified } : {}),
        });
      }
      const text = decodeUtf8(await readExactBody(response, transfer.sizeBytes));
      if (kind === "text") return text;
      try {
        return JSON.parse(text) as JsonValue;
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        throw new PedelecError("ASSET_INVALID_JSON", `The asset ${path} is not valid JSON: ${reason}`);
      }
    });
  }

  /** The session is over: every pending transfer rejects with `error` and its HTTP request is stopped. */
  failAll(error: PedelecError): void {
    for (const fail of [...this.#pending]) fail(error);
  }

  async #prepare<TType extends "prepareAssetUpload" | "prepareAssetDownload">(
    type: TType,
    payload: PageRequestPayload<TType>,
    signal: AbortSignal,
  ): Promise<PageRequestResult<TType>> {
    await this.#init.ready();
    signal.throwIfAborted();
    const answer = await this.#init.bridge.request(type, payload);
    signal.throwIfAborted();
    return answer.result;
  }

  /**
   * Runs one transfer: it rejects at once when `signal` aborts or the session ends, and `work`'s signal then stops
   * whatever it is waiting on. Once settled, anything `work` still does or throws is ignored.
   */
  #perform<T>(
    signal: AbortSignal | undefined,
    onCancel: (signal: AbortSignal) => PedelecError,
    fallbackCode: ErrorCode,
    work: (signal: AbortSignal) => Promise<T>,
  ): Promise<T> {
    if (signal?.aborted) return Promise.reject(onCancel(signal));
    return new Promise<T>((resolve, reject) => {
      const controller = new AbortController();
      let settled = false;
      const settle = (): boolean => {
        if (settled) return false;
        settled = true;
        this.#pending.delete(fail);
        signal?.removeEventListener("abort", onAbort);
        return true;
      };
      const fail = (error: PedelecError): void => {
        if (!settle()) return;
        controller.abort(error);
        reject(error);
      };
      const onAbort = (): void => fail(onCancel(signal!));
      signal?.addEventListener("abort", onAbort, { once: true });
      this.#pending.add(fail);
      work(controller.signal).then(
        (value) => {
          if (settle()) resolve(value);
        },
        (error: unknown) => fail(PedelecError.from(error, fallbackCode)),
      );
    });
  }
}

function checkUpload(
  file: Blob,
  targetPath: string | undefined,
  options: AssetUploadOptions | undefined,
): { path: string; signal: AbortSignal | undefined; onProgress: AssetUploadOptions["onProgress"] } {
  if (!isBlob(file)) throw new PedelecError("INVALID_INPUT", "uploadAsset needs a Blob or a File");
  let path: string;
  if (targetPath === undefined) {
    const name = (file as Partial<File>).name;
    if (typeof name !== "string" || name.length === 0) {
      throw new PedelecError("INVALID_INPUT", 'uploadAsset needs a targetPath for a Blob without a name, e.g. "/notes.txt"');
    }
    path = `/${name}`;
  } else if (typeof targetPath === "string") {
    path = targetPath;
  } else {
    throw new PedelecError("INVALID_INPUT", 'uploadAsset: targetPath must be a string such as "/inbox/report.pdf"');
  }
  checkPath(path);
  if (file.size > MAX_ASSET_BYTES) {
    throw new PedelecError("ASSET_TOO_LARGE", `The file is ${file.size} bytes; an asset may be at most ${MAX_ASSET_BYTES} bytes (100 MiB)`, {
      sizeBytes: file.size,
      maxBytes: MAX_ASSET_BYTES,
    });
  }
  if (options !== undefined && (typeof options !== "object" || options === null)) {
    throw new PedelecError("INVALID_INPUT", "uploadAsset: options must be an object");
  }
  const onProgress = options?.onProgress;
  if (onProgress !== undefined && typeof onProgress !== "function") {
    throw new PedelecError("INVALID_INPUT", "uploadAsset: onProgress must be a function");
  }
  return { path, signal: checkSignal(options, "uploadAsset"), onProgress };
}

function checkPath(path: unknown): asserts path is string {
  if (typeof path !== "string") throw new PedelecError("ASSET_PATH_INVALID", `An asset path is a string such as "/notes.txt", not ${describe(path)}`);
  const problem = assetPathProblem(path);
  if (problem !== null) throw new PedelecError("ASSET_PATH_INVALID", `The asset path ${printableAssetPath(path)} ${problem}`, { path });
}

function checkSignal(options: { signal?: AbortSignal } | undefined, method: string): AbortSignal | undefined {
  if (options !== undefined && (typeof options !== "object" || options === null)) {
    throw new PedelecError("INVALID_INPUT", `${method}: options must be an object`);
  }
  const signal = options?.signal;
  if (signal !== undefined && !isAbortSignal(signal)) throw new PedelecError("INVALID_INPUT", `${method}: signal must be an AbortSignal`);
  return signal;
}

async function download(url: string, signal: AbortSignal): Promise<Response> {
  let response: Response;
  try {
    // No custom headers and no credentials: a simple CORS request, so the browser sends no preflight.
    response = await fetch(url, { method: "GET", credentials: "omit", mode: "cors", redirect: "error", signal });
  } catch {
    signal.throwIfAborted();
    throw new PedelecError("ASSET_READ_FAILED", "The Pedelec Desktop's asset server could not be reached");
  }
  if (isSuccess(response.status)) return response;
  let body = "";
  try {
    body = await response.text();
  } catch {
    // The status alone still says the download was refused.
  }
  throw errorFromAnswer(response.status, body, "ASSET_READ_FAILED", "download");
}

function decodeUtf8(bytes: Uint8Array): string {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new PedelecError("ASSET_TEXT_DECODE_FAILED", "The asset is not valid UTF-8 text (read it as a file instead)");
  }
}

function cancelled(transfer: "upload" | "read" | "listing", code: ErrorCode): (signal: AbortSignal) => PedelecError {
  return (signal) => {
    const reason: unknown = signal.reason;
    const detail = reason instanceof Error ? reason.message : typeof reason === "string" ? reason : undefined;
    return new PedelecError(code, `The ${transfer} was cancelled`, detail === undefined ? undefined : { reason: detail });
  };
}

/** Duck-typed, so a Blob from another frame (another realm's Blob class) still works. */
function isBlob(value: unknown): value is Blob {
  if (typeof value !== "object" || value === null) return false;
  const candidate = value as Partial<Blob>;
  return typeof candidate.size === "number" && typeof candidate.slice === "function" && typeof candidate.stream === "function";
}

/** Duck-typed, so a signal from another frame still works. */
function isAbortSignal(value: unknown): value is AbortSignal {
  if (typeof value !== "object" || value === null) return false;
  const candidate = value as Partial<AbortSignal>;
  return typeof candidate.aborted === "boolean" && typeof candidate.addEventListener === "function";
}

function describe(value: unknown): string {
  return typeof value === "string" ? JSON.stringify(value) : value === null ? "null" : typeof value;
}
