import { constants } from "node:fs";
import type { OutgoingHttpHeaders, ServerResponse } from "node:http";
import { open, type FileHandle } from "node:fs/promises";
import { pipeline } from "node:stream/promises";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { TRANSFER_CHUNK_BYTES } from "./asset-http.js";
import { assetsRoot, findAsset } from "./asset-location.js";
import { mimeTypeOf } from "./asset-mime.js";
import type { TicketRecord } from "./transfer-tickets.js";

/**
 * O_NOFOLLOW: a symlink swapped in after the lstat walk is refused by the kernel; O_NONBLOCK: a FIFO swapped in does
 * not block the open (it is then refused as not a file).
 */
const OPEN_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

async function openAsset(absolutePath: string, assetPath: string): Promise<FileHandle> {
  try {
    return await open(absolutePath, OPEN_FLAGS);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ELOOP") throw new PedelecError("ASSET_PATH_INVALID", `${assetPath} is a symlink, which Pedelec does not follow`);
    if (code === "ENOENT" || code === "ENOTDIR") throw new PedelecError("ASSET_NOT_FOUND", `no asset at ${assetPath}`);
    throw new PedelecError("ASSET_READ_FAILED", `${assetPath} could not be opened: ${code ?? String(error)}`);
  }
}

/**
 * One download: the file at the ticket's path, looked up again now (it may have changed since the ticket was made),
 * streamed from disk with its type, length and modification time. Should the file shrink while it is sent, the
 * connection is cut instead of ending early, so the page never takes a short body for the whole file.
 */
export async function sendDownload(record: TicketRecord, response: ServerResponse, headers: OutgoingHttpHeaders, signal: AbortSignal): Promise<void> {
  const root = await assetsRoot(record.workspacePath, "ASSET_READ_FAILED");
  const found = await findAsset(root, record.assetPath);
  const handle = await openAsset(found.absolutePath, record.assetPath);
  let owned = true;
  try {
    const stats = await handle.stat().catch((error: unknown) => {
      throw PedelecError.from(error, "ASSET_READ_FAILED", `${record.assetPath} could not be read`);
    });
    if (!stats.isFile()) throw new PedelecError("ASSET_NOT_FILE", `${record.assetPath} is not a regular file`);
    response.writeHead(200, {
      ...headers,
      "Content-Type": mimeTypeOf(record.assetPath),
      "Content-Length": stats.size,
      "Last-Modified": stats.mtime.toUTCString(),
      "X-Pedelec-Modified-At": stats.mtime.toISOString(),
      "Cache-Control": "no-store",
      "X-Content-Type-Options": "nosniff",
    });
    if (stats.size === 0) {
      response.end();
      return;
    }
    // The stream owns the handle from here and closes it however the transfer ends.
    const source = handle.createReadStream({ start: 0, end: stats.size - 1, highWaterMark: TRANSFER_CHUNK_BYTES });
    owned = false;
    try {
      await pipeline(source, response, { signal, end: false });
    } catch (error) {
      response.destroy();
      throw PedelecError.from(error, "ASSET_READ_FAILED", `${record.assetPath} could not be sent`);
    }
    if (source.bytesRead !== stats.size) {
      response.destroy();
      throw new PedelecError("ASSET_READ_FAILED", `${record.assetPath} changed while it was sent`);
    }
    response.end();
  } finally {
    if (owned) await handle.close().catch(() => undefined);
  }
}
