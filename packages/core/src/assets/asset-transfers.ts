import { ASSET_TICKET_TTL_MS, MAX_ASSET_BYTES, type AssetEntry } from "@pedelec/protocol/assets";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { log } from "../logger.js";
import { sendJson } from "./asset-http.js";
import { listAssetFiles } from "./asset-listing.js";
import { assetSegments, assetsRoot, findAsset, uploadTarget } from "./asset-location.js";
import { AssetQuota, DEFAULT_ASSET_QUOTA_SOURCE, type AssetQuotaSource, type UploadClaim } from "./asset-quota.js";
import { mimeTypeOf } from "./asset-mime.js";
import { AssetServer, type AssetServerHandlers } from "./asset-server.js";
import { receiveUpload } from "./asset-upload.js";
import { sendDownload } from "./asset-download.js";
import { TransferTickets, type TicketGrant, type TicketRecord, type TransferDirection } from "./transfer-tickets.js";

/** What the asset store needs of a session. */
export interface AssetSession {
  readonly id: string;
  readonly origin: string;
  readonly ended: boolean;
  readonly endedSignal: AbortSignal;
  readonly setup: { readonly workspace: { readonly path: string } };
}

export interface AssetTransfersOptions {
  /** How long a ticket may wait for its request; ASSET_TICKET_TTL_MS unless a test shortens it. */
  ticketTtlMs?: number;
  /** The clock tickets expire by. */
  now?: () => number;
  /** The loopback port to listen on; 0 (the default) picks a free one. */
  port?: number;
  /** The limits uploads are held to and the origin's other sessions; the defaults and this session alone unless given. */
  quota?: AssetQuotaSource;
  /** How the disk's free bytes are measured; the file system's own figure unless a test gives another. */
  freeBytesOf?: (path: string) => Promise<number>;
}

function claimOf(record: TicketRecord): Omit<UploadClaim, "targetPath"> {
  return { sessionId: record.sessionId, origin: record.origin, workspacePath: record.workspacePath, bytes: record.declaredBytes ?? 0 };
}

/** Download tickets one session may hold open at once; more than a page needs, few enough to bound memory. */
const MAX_OPEN_DOWNLOAD_TICKETS = 32;

/**
 * Sessions' assets: the three page requests (prepareAssetUpload, prepareAssetDownload, listAssets) and the loopback
 * server the bodies travel through. The server failing to start does not stop Core; the requests that need it then
 * answer ASSET_UPLOAD_SERVER_UNAVAILABLE.
 */
export class AssetTransfers {
  readonly #tickets: TransferTickets;
  #server: AssetServer | null = null;
  /** Sessions with an upload under way: with a still-open upload ticket, they make "one upload at a time". */
  readonly #uploading = new Set<string>();
  readonly #watchedSessions = new WeakSet<AbortSignal>();
  readonly #inFlight = new Set<Promise<unknown>>();
  readonly #closing = new AbortController();
  readonly #quota: AssetQuota;

  private constructor(options: AssetTransfersOptions) {
    this.#tickets = new TransferTickets({ ttlMs: options.ticketTtlMs ?? ASSET_TICKET_TTL_MS, now: options.now ?? Date.now });
    this.#quota = new AssetQuota(options.quota ?? DEFAULT_ASSET_QUOTA_SOURCE, options.freeBytesOf);
  }

  static async start(options: AssetTransfersOptions = {}): Promise<AssetTransfers> {
    const transfers = new AssetTransfers(options);
    const handlers: AssetServerHandlers = {
      upload: (record, request, response, cors) =>
        transfers.#track(record, async (signal) => {
          // Checked again now that the body is here: since the ticket was made, other uploads of the origin may have
          // landed or started, or the disk filled up. Admitted, the upload counts with its size until it ends.
          const root = await assetsRoot(record.workspacePath, "ASSET_UPLOAD_FAILED");
          const targetPath = await uploadTarget(root, record.assetPath, false);
          const release = await transfers.#quota.admit({ ...claimOf(record), targetPath });
          try {
            const receipt = await receiveUpload(record, request, signal);
            sendJson(response, 200, receipt, cors);
          } finally {
            release();
          }
        }),
      download: (record, _request, response, cors) => transfers.#track(record, (signal) => sendDownload(record, response, cors, signal)),
    };
    try {
      transfers.#server = await AssetServer.start(transfers.#tickets, handlers, options.port ?? 0);
      log("info", "asset server listening", { port: transfers.#server.port });
    } catch (error) {
      log("error", "the asset server could not start; asset transfers are unavailable", { error: String(error) });
    }
    return transfers;
  }

  /** The server's port, or null when it could not start. */
  get port(): number | null {
    return this.#server?.port ?? null;
  }

  /** A ticket to PUT exactly `sizeBytes` bytes to `path`; one upload at a time per session. */
  async prepareUpload(session: AssetSession, request: { path: string; sizeBytes: number }): Promise<{ url: string; expiresAt: string }> {
    const server = this.#available(session);
    if (request.sizeBytes > MAX_ASSET_BYTES) {
      throw new PedelecError("ASSET_TOO_LARGE", `${request.sizeBytes} bytes is over the ${MAX_ASSET_BYTES}-byte limit for one asset`);
    }
    assetSegments(request.path);
    this.#requireNoUploadStreaming(session);
    const root = await assetsRoot(session.setup.workspace.path, "ASSET_UPLOAD_FAILED");
    const targetPath = await uploadTarget(root, request.path, false);
    await this.#quota.check({
      sessionId: session.id,
      origin: session.origin,
      workspacePath: session.setup.workspace.path,
      targetPath,
      bytes: request.sizeBytes,
    });
    // Checked again: an upload of this session may have started while this one looked at the disk.
    this.#requireNoUploadStreaming(session);
    // A ticket nobody has used yet does not hold the slot: a page that gave up on an upload before sending it
    // (cancelled, reloaded) must not be locked out for a ticket's lifetime. The newest prepare wins.
    this.#tickets.supersede(session.id, "upload");
    return this.#issue(server, session, "upload", request.path, request.sizeBytes);
  }

  /** A ticket to GET the file at `path`, with what it is now. */
  async prepareDownload(
    session: AssetSession,
    request: { path: string },
  ): Promise<{ url: string; expiresAt: string; sizeBytes: number; mimeType: string; modifiedAt: string }> {
    const server = this.#available(session);
    assetSegments(request.path);
    const root = await assetsRoot(session.setup.workspace.path, "ASSET_READ_FAILED");
    const found = await findAsset(root, request.path);
    if (this.#tickets.openCount(session.id, "download") >= MAX_OPEN_DOWNLOAD_TICKETS) {
      throw new PedelecError("SESSION_BUSY", `session ${session.id} already has ${MAX_OPEN_DOWNLOAD_TICKETS} downloads waiting to start`);
    }
    const ticket = this.#issue(server, session, "download", request.path);
    return { ...ticket, sizeBytes: found.stats.size, mimeType: mimeTypeOf(request.path), modifiedAt: found.stats.mtime.toISOString() };
  }

  async list(session: AssetSession): Promise<AssetEntry[]> {
    if (session.ended) throw new PedelecError("SESSION_ENDED", `session ${session.id} has ended`);
    return listAssetFiles(session.setup.workspace.path);
  }

  /** Stops the server, cuts transfers under way and waits until their temporary files are gone. */
  async close(): Promise<void> {
    this.#closing.abort(new PedelecError("ASSET_UPLOAD_SERVER_UNAVAILABLE", "Pedelec Core is stopping"));
    await this.#server?.close();
    await Promise.allSettled([...this.#inFlight]);
  }

  #available(session: AssetSession): AssetServer {
    if (session.ended) throw new PedelecError("SESSION_ENDED", `session ${session.id} has ended`);
    if (this.#server === null || this.#closing.signal.aborted) {
      throw new PedelecError("ASSET_UPLOAD_SERVER_UNAVAILABLE", "Pedelec's asset server is not running; restart Pedelec to transfer assets");
    }
    return this.#server;
  }

  /** One upload at a time: while a body is streaming, another prepare is SESSION_BUSY. */
  #requireNoUploadStreaming(session: AssetSession): void {
    if (this.#uploading.has(session.id)) {
      throw new PedelecError("SESSION_BUSY", `session ${session.id} is already uploading an asset; one upload at a time`);
    }
  }

  #issue(
    server: AssetServer,
    session: AssetSession,
    direction: TransferDirection,
    assetPath: string,
    declaredBytes?: number,
  ): { url: string; expiresAt: string } {
    this.#watchSession(session);
    const grant: TicketGrant = {
      direction,
      sessionId: session.id,
      origin: session.origin,
      assetPath,
      workspacePath: session.setup.workspace.path,
      sessionEnded: session.endedSignal,
      ...(declaredBytes === undefined ? {} : { declaredBytes }),
    };
    const { ticket, expiresAtMs } = this.#tickets.issue(grant);
    return { url: server.transferUrl(ticket), expiresAt: new Date(expiresAtMs).toISOString() };
  }

  /** When the session ends, its tickets stop working at once (transfers under way are cut by their signal). */
  #watchSession(session: AssetSession): void {
    if (this.#watchedSessions.has(session.endedSignal)) return;
    this.#watchedSessions.add(session.endedSignal);
    session.endedSignal.addEventListener("abort", () => this.#tickets.endSession(session.id), { once: true });
  }

  /** Runs one transfer, cut short when its session ends or Core stops; Core's stop waits for its clean-up. */
  async #track(record: TicketRecord, run: (signal: AbortSignal) => Promise<void>): Promise<void> {
    const isUpload = record.direction === "upload";
    if (isUpload) this.#uploading.add(record.sessionId);
    const running = run(AbortSignal.any([this.#closing.signal, record.sessionEnded]));
    this.#inFlight.add(running);
    try {
      await running;
    } finally {
      this.#inFlight.delete(running);
      if (isUpload) this.#uploading.delete(record.sessionId);
    }
  }
}
