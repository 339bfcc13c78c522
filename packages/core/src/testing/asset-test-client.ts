import { request as httpRequest, type IncomingHttpHeaders } from "node:http";
import { Readable } from "node:stream";

/** One HTTP exchange as a test sees it. */
export interface Exchange {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
  /** The JSON body (error answers and upload receipts). */
  json(): unknown;
}

export interface ExchangeOptions {
  method: string;
  /** Sent as they are: Host and Origin included, which fetch() would not let a test choose. */
  headers?: Record<string, string | number>;
  /** A whole body, or one streamed without Content-Length (chunked) unless a header gives one. */
  body?: Buffer | string | AsyncIterable<Buffer>;
  /** Streamed bodies only: called with how the response went once the body is fully written or cut. */
  signal?: AbortSignal;
  /** Counts body bytes without keeping them (large downloads). */
  discardBody?: boolean;
  onBodyChunk?: (chunk: Buffer) => void;
}

/**
 * A raw request with Node's http client on a fresh connection. The answer counts even when the server closed the
 * connection while the body was still being sent (an early refusal); only a reset before any answer rejects.
 */
export function exchange(url: string, options: ExchangeOptions): Promise<Exchange> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(url, { method: options.method, headers: options.headers ?? {}, agent: false, signal: options.signal });
    let answered = false;
    request.on("response", (response) => {
      answered = true;
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => {
        options.onBodyChunk?.(chunk);
        if (!options.discardBody) chunks.push(chunk);
      });
      response.on("error", reject);
      response.on("end", () => {
        const body = Buffer.concat(chunks);
        resolve({ status: response.statusCode ?? 0, headers: response.headers, body, json: () => JSON.parse(body.toString("utf8")) as unknown });
      });
    });
    request.on("error", (error) => {
      if (!answered) reject(error);
    });
    const body = options.body;
    if (body === undefined) request.end();
    else if (typeof body === "string" || Buffer.isBuffer(body)) request.end(body);
    else {
      Readable.from(body)
        .on("error", (error) => request.destroy(error))
        .pipe(request);
    }
  });
}

/** `count` bytes in chunks of at most `chunkBytes`, from one reused buffer, so big bodies cost no memory. */
export async function* patternBytes(count: number, chunkBytes = 1024 * 1024): AsyncGenerator<Buffer> {
  const chunk = Buffer.alloc(Math.min(chunkBytes, Math.max(count, 1)), 0x61);
  let left = count;
  while (left > 0) {
    const size = Math.min(left, chunk.length);
    left -= size;
    yield size === chunk.length ? chunk : chunk.subarray(0, size);
  }
}
