/** The asset server's HTTP answer to an upload, whatever its status. */
export interface UploadResponse {
  status: number;
  body: string;
}

/**
 * Sends `body` with PUT to `url` and resolves with the server's answer. Calls `onProgress` with the bytes sent so far
 * (as often as the platform reports them). Rejects when no answer arrives: the server is unreachable, the connection
 * broke, or `signal` aborted (the request is then stopped).
 */
export type UploadBody = (url: string, body: Blob, onProgress: (loadedBytes: number) => void, signal: AbortSignal) => Promise<UploadResponse>;

/** XMLHttpRequest where the page has it (fetch reports no upload progress), fetch elsewhere (e.g. in a worker). */
export function defaultUploadBody(): UploadBody {
  return typeof XMLHttpRequest === "function" ? xhrUploadBody : fetchUploadBody;
}

export const xhrUploadBody: UploadBody = (url, body, onProgress, signal) =>
  new Promise<UploadResponse>((resolve, reject) => {
    if (signal.aborted) {
      reject(new Error("the upload was aborted before it started"));
      return;
    }
    const request = new XMLHttpRequest();
    const onAbort = (): void => request.abort();
    const finish = (): void => signal.removeEventListener("abort", onAbort);
    request.open("PUT", url);
    request.responseType = "text";
    // No cookies or HTTP auth: the ticket in the URL is the only credential.
    request.withCredentials = false;
    request.upload.onprogress = (event) => onProgress(event.loaded);
    request.onload = () => {
      finish();
      resolve({ status: request.status, body: request.responseText });
    };
    request.onerror = () => {
      finish();
      reject(new Error("the upload connection failed"));
    };
    request.onabort = () => {
      finish();
      reject(new Error("the upload was aborted"));
    };
    request.ontimeout = request.onerror;
    signal.addEventListener("abort", onAbort, { once: true });
    // A Blob body sends its own type as Content-Type (none for an empty type), which the server's CORS allows.
    request.send(body);
  });

export const fetchUploadBody: UploadBody = async (url, body, _onProgress, signal) => {
  const response = await fetch(url, { method: "PUT", body, credentials: "omit", mode: "cors", redirect: "error", signal });
  return { status: response.status, body: await response.text() };
};
