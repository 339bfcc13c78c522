import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from "node:http";
import type { ErrorCode } from "@pedelec/protocol/error-codes";
import { PedelecError } from "@pedelec/protocol/pedelec-error";

/**
 * The buffer size of an asset's file stream, each way. Larger buffers are no faster over loopback, and Node 24 and later
 * free dropped 1 MiB buffers late enough that a 100 MiB transfer's memory grew about twice as much as with these.
 */
export const TRANSFER_CHUNK_BYTES = 256 * 1024;

/** A refusal whose HTTP status is not the usual one for its code (a body too long is 413, too short 400). */
export class HttpRefusal extends PedelecError {
  constructor(
    readonly status: number,
    code: ErrorCode,
    message: string,
  ) {
    super(code, message);
  }
}

const STATUS_BY_CODE: Partial<Record<ErrorCode, number>> = {
  ASSET_UPLOAD_UNAUTHORIZED: 403,
  ASSET_DOWNLOAD_UNAUTHORIZED: 403,
  ASSET_UPLOAD_TICKET_EXPIRED: 410,
  ASSET_DOWNLOAD_TICKET_EXPIRED: 410,
  SESSION_ENDED: 410,
  ASSET_TOO_LARGE: 413,
  ASSET_QUOTA_EXCEEDED: 413,
  DISK_SPACE_LOW: 507,
  ASSET_UPLOAD_SIZE_MISMATCH: 400,
  ASSET_PATH_INVALID: 400,
  ASSET_NOT_FOUND: 404,
  ASSET_NOT_FILE: 409,
};

export function statusOf(error: PedelecError): number {
  if (error instanceof HttpRefusal) return error.status;
  return STATUS_BY_CODE[error.code] ?? 500;
}

/** Headers the page's SDK reads from a download; browsers hide all but a few unless they are exposed. */
export const EXPOSED_HEADERS = "Content-Length, Content-Type, Last-Modified, X-Pedelec-Modified-At";

/** CORS headers for a response to `origin`, which the caller has already checked is the ticket's session origin. */
export function corsHeaders(origin: string | undefined): OutgoingHttpHeaders {
  if (origin === undefined) return {};
  return { "Access-Control-Allow-Origin": origin, "Access-Control-Expose-Headers": EXPOSED_HEADERS, Vary: "Origin" };
}

/** A JSON answer; `closeConnection` tells the client not to send another request on this connection. */
export function sendJson(response: ServerResponse, status: number, body: unknown, headers: OutgoingHttpHeaders = {}, closeConnection = false): void {
  const text = JSON.stringify(body);
  response.writeHead(status, {
    ...headers,
    "Content-Type": "application/json; charset=utf-8",
    "Content-Length": Buffer.byteLength(text),
    "Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff",
    ...(closeConnection ? { Connection: "close" } : {}),
  });
  response.end(text);
}

export interface ErrorAnswer {
  headers?: OutgoingHttpHeaders;
  /** Instead of the status that fits the code. */
  status?: number;
}

/** How long after its refusal, and for how many bytes, a refused body is read into the void before the connection is cut. */
const LINGER_MS = 1_000;
const LINGER_BYTES = 4 * 1024 * 1024;

/**
 * `{"error":{"code","message","details"?}}` with the status that fits the code. When the request's body was not read to its end
 * (a refusal before or during an upload), closing at once would make the kernel reset the connection, and the client
 * would see the reset instead of the refusal; so the answer goes out, the sending side is closed, what the client still
 * sends is discarded up to LINGER_BYTES (then reading stops), and LINGER_MS later the connection is cut. Nothing of
 * such a body is kept.
 */
export function refuse(request: IncomingMessage, response: ServerResponse, error: PedelecError, answer: ErrorAnswer = {}): void {
  // The details too: a quota refusal's limit and usage are what the page shows its user.
  const body = { error: error.toWire() };
  const lingering = !request.complete && !request.socket.destroyed;
  // Node would otherwise destroy the socket as soon as the answer is sent (when the client asked to close).
  if (lingering) response.shouldKeepAlive = true;
  sendJson(response, answer.status ?? statusOf(error), body, answer.headers ?? {});
  if (lingering) lingerThenClose(request, response);
}

function lingerThenClose(request: IncomingMessage, response: ServerResponse): void {
  const socket = request.socket;
  let discarded = 0;
  request.unpipe();
  request.on("data", (chunk: Buffer) => {
    discarded += chunk.length;
    if (discarded > LINGER_BYTES) request.pause();
  });
  request.resume();
  response.once("finish", () => {
    socket.end();
    setTimeout(() => socket.destroy(), LINGER_MS).unref();
  });
}
