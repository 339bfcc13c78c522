import { randomBytes } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { createWriteStream, type WriteStream } from "node:fs";
import { lstat, rename, rm } from "node:fs/promises";
import { once } from "node:events";
import { join } from "node:path";
import { Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import { MAX_ASSET_BYTES, type AssetUploadReceipt } from "@pedelec/protocol/assets";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { HttpRefusal, TRANSFER_CHUNK_BYTES } from "./asset-http.js";
import { RESERVED_NAME_PREFIX, assetsRoot, uploadTarget } from "./asset-location.js";
import type { TicketRecord } from "./transfer-tickets.js";

/**
 * Refuses a body whose announced length differs from the declared one before reading any of it. A chunked body (no
 * Content-Length) is counted as it streams instead.
 */
function checkAnnouncedLength(request: IncomingMessage, declared: number): void {
  const header = request.headers["content-length"];
  if (header === undefined) return;
  const announced = Number(header);
  if (announced > MAX_ASSET_BYTES) {
    throw new HttpRefusal(413, "ASSET_TOO_LARGE", `the body is ${announced} bytes; an asset may be at most ${MAX_ASSET_BYTES} bytes`);
  }
  if (announced !== declared) {
    throw new HttpRefusal(
      announced > declared ? 413 : 400,
      "ASSET_UPLOAD_SIZE_MISMATCH",
      `the body is ${announced} bytes, but ${declared} were declared`,
    );
  }
}

/**
 * Streams the body into `file` (a new 0600 file, flushed to disk before it closes) and resolves with the body's length
 * once the file is closed. A body longer than `limit` fails at the chunk that goes over, which is never written, and
 * reading stops there. The request is piped rather than made part of the pipeline, so a failure does not destroy it:
 * the refusal can still be answered on its connection.
 */
async function writeBody(request: IncomingMessage, file: WriteStream, limit: number, signal: AbortSignal): Promise<number> {
  let received = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      received += chunk.length;
      if (received > limit) {
        request.unpipe(counter);
        request.pause();
        callback(new HttpRefusal(413, "ASSET_UPLOAD_SIZE_MISMATCH", `the body is longer than the ${limit} bytes declared`));
        return;
      }
      callback(null, chunk);
    },
  });
  const onClose = (): void => {
    if (!request.complete) counter.destroy(new PedelecError("ASSET_UPLOAD_FAILED", "the connection closed before the whole body arrived"));
  };
  request.once("close", onClose);
  request.pipe(counter);
  try {
    await pipeline(counter, file, { signal });
    return received;
  } finally {
    request.off("close", onClose);
    request.unpipe(counter);
  }
}

/** Closes the file (after any write under way: the stream waits for it) and removes it. */
async function discard(file: WriteStream, temporary: string): Promise<void> {
  if (!file.closed) {
    const closed = once(file, "close").catch(() => undefined);
    file.destroy();
    await closed;
  }
  await rm(temporary, { force: true });
}

/**
 * One upload: the body goes to a temporary file (0600) inside the assets folder, is flushed to disk, and only when
 * exactly the declared number of bytes arrived is it renamed over the target, so a page never sees half a file and a
 * failed upload leaves nothing behind. `signal` aborts when the session ends or Core stops.
 */
export async function receiveUpload(record: TicketRecord, request: IncomingMessage, signal: AbortSignal): Promise<AssetUploadReceipt> {
  const declared = record.declaredBytes ?? 0;
  checkAnnouncedLength(request, declared);
  const root = await assetsRoot(record.workspacePath, "ASSET_UPLOAD_FAILED");
  // Checked again before the body is read: the target may have become a folder or a symlink since the ticket was made.
  await uploadTarget(root, record.assetPath, false);
  const temporary = join(root, `${RESERVED_NAME_PREFIX}upload-${randomBytes(12).toString("hex")}`);
  const file = createWriteStream(temporary, { flags: "wx", mode: 0o600, flush: true, highWaterMark: TRANSFER_CHUNK_BYTES });
  try {
    const received = await writeBody(request, file, Math.min(declared, MAX_ASSET_BYTES), signal);
    if (received !== declared) {
      throw new HttpRefusal(400, "ASSET_UPLOAD_SIZE_MISMATCH", `the body was ${received} bytes, but ${declared} were declared`);
    }
    const target = await uploadTarget(root, record.assetPath, true);
    await rename(temporary, target);
    const stats = await lstat(target);
    return { path: record.assetPath, sizeBytes: stats.size, modifiedAt: stats.mtime.toISOString() };
  } catch (error) {
    await discard(file, temporary);
    if (signal.aborted) throw PedelecError.from(signal.reason, "ASSET_UPLOAD_FAILED");
    throw PedelecError.from(error, "ASSET_UPLOAD_FAILED", `the upload to ${record.assetPath} failed`);
  }
}
