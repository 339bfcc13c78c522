// A real loopback HTTP server standing in for Core's asset server: each ticket URL answers one request the way the
// test scripts it, and every request that arrives is recorded.
import { randomBytes } from "node:crypto";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface RecordedTransfer {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** What a ticket answers: a status with a body (sent without Content-Length when `chunked`), or a dropped connection. */
export type TransferReply = { status: number; body?: string | Uint8Array; contentType?: string; chunked?: boolean } | { dropConnection: true };

export class TransferServer {
  readonly transfers: RecordedTransfer[] = [];
  readonly #server: Server;
  readonly #tickets = new Map<string, (transfer: RecordedTransfer) => TransferReply>();
  readonly #waiters: Array<() => void> = [];
  #port = 0;

  private constructor(server: Server) {
    this.#server = server;
  }

  static async start(): Promise<TransferServer> {
    const server = createServer();
    const transferServer = new TransferServer(server);
    server.on("request", (request, response) => {
      const chunks: Buffer[] = [];
      request.on("data", (chunk: Buffer) => chunks.push(chunk));
      request.on("end", () => {
        const transfer: RecordedTransfer = {
          method: request.method ?? "",
          path: request.url ?? "",
          headers: request.headers,
          body: Buffer.concat(chunks),
        };
        transferServer.transfers.push(transfer);
        for (const wake of transferServer.#waiters.splice(0)) wake();
        const ticket = transfer.path.startsWith("/transfers/") ? transfer.path.slice("/transfers/".length) : "";
        const answer = transferServer.#tickets.get(ticket);
        // Single use, like Core's tickets.
        transferServer.#tickets.delete(ticket);
        const reply: TransferReply = answer?.(transfer) ?? {
          status: 404,
          body: JSON.stringify({ error: { code: "ASSET_UPLOAD_UNAUTHORIZED", message: "Unknown transfer ticket" } }),
        };
        if ("dropConnection" in reply) {
          request.socket.destroy();
          return;
        }
        const body = typeof reply.body === "string" ? Buffer.from(reply.body) : Buffer.from(reply.body ?? new Uint8Array());
        const headers: Record<string, string> = { "content-type": reply.contentType ?? "application/json" };
        if (!reply.chunked) headers["content-length"] = String(body.byteLength);
        response.writeHead(reply.status, headers);
        response.end(body);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    transferServer.#port = (server.address() as AddressInfo).port;
    return transferServer;
  }

  /** The port it listens on (still known after close, so a test can show it never leaks). */
  get port(): number {
    return this.#port;
  }

  /** A fresh single-use transfer URL whose request gets `reply`'s answer. */
  ticket(reply: (transfer: RecordedTransfer) => TransferReply): { url: string; ticket: string } {
    const ticket = randomBytes(32).toString("base64url");
    this.#tickets.set(ticket, reply);
    return { url: `http://127.0.0.1:${this.port}/transfers/${ticket}`, ticket };
  }

  /** The `index`-th recorded request, waiting (up to the deadline) until it arrived. */
  async waitForTransfer(index = 0, deadlineMs = 2_000): Promise<RecordedTransfer> {
    const deadline = Date.now() + deadlineMs;
    for (;;) {
      const found = this.transfers[index];
      if (found !== undefined) return found;
      const remaining = deadline - Date.now();
      if (remaining <= 0) throw new Error(`no transfer #${index} within ${deadlineMs} ms`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, remaining);
        this.#waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}
