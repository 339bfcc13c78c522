import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { ErrorCode } from "@pedelec/protocol/error-codes";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { corsHeaders, refuse } from "./asset-http.js";
import type { TicketRecord, TransferDirection, TransferTickets } from "./transfer-tickets.js";

/** The server binds here only: the loopback address, never a name DNS could point elsewhere. */
export const ASSET_SERVER_HOST = "127.0.0.1";
const TRANSFER_PATH = /^\/transfers\/([A-Za-z0-9_-]{1,128})$/;
const METHOD_OF: Record<TransferDirection, "PUT" | "GET"> = { upload: "PUT", download: "GET" };

export interface AssetServerHandlers {
  /** Runs an upload whose ticket was just spent; answers the request itself or throws a coded error. */
  upload(record: TicketRecord, request: IncomingMessage, response: ServerResponse, cors: ReturnType<typeof corsHeaders>): Promise<void>;
  /** Runs a download whose ticket was just spent; streams the response itself or throws a coded error before it starts. */
  download(record: TicketRecord, request: IncomingMessage, response: ServerResponse, cors: ReturnType<typeof corsHeaders>): Promise<void>;
}

function unauthorizedCode(method: string | undefined): ErrorCode {
  return method === "PUT" ? "ASSET_UPLOAD_UNAUTHORIZED" : "ASSET_DOWNLOAD_UNAUTHORIZED";
}

/**
 * Core's loopback HTTP server for asset bodies: one route, `/transfers/<ticket>`, PUT for uploads and GET for
 * downloads, plus the CORS preflight. The ticket is the only credential; the checks that need no ticket (Host, route,
 * method, Origin) run before it is spent, so a rebinding page or a foreign origin cannot burn a page's ticket.
 */
export class AssetServer {
  readonly #server: Server;
  readonly #port: number;

  private constructor(server: Server, port: number) {
    this.#server = server;
    this.#port = port;
  }

  /** Listens on 127.0.0.1 (`port` 0: a random free port). */
  static start(tickets: TransferTickets, handlers: AssetServerHandlers, port = 0): Promise<AssetServer> {
    return new Promise((resolve, reject) => {
      let expectedHost = "";
      const server = createServer({ requestTimeout: 10 * 60_000, headersTimeout: 30_000, keepAliveTimeout: 5_000 }, (request, response) => {
        void handle(request, response, expectedHost, tickets, handlers);
      });
      server.once("error", reject);
      server.listen(port, ASSET_SERVER_HOST, () => {
        server.off("error", reject);
        const bound = (server.address() as AddressInfo).port;
        expectedHost = `${ASSET_SERVER_HOST}:${bound}`;
        resolve(new AssetServer(server, bound));
      });
    });
  }

  get port(): number {
    return this.#port;
  }

  /** The URL a ticket is used at; it holds nothing but the ticket. */
  transferUrl(ticket: string): string {
    return `http://${ASSET_SERVER_HOST}:${this.#port}/transfers/${ticket}`;
  }

  /** Stops listening and cuts every connection, transfers under way included. */
  close(): Promise<void> {
    return new Promise((resolve) => {
      this.#server.close(() => resolve());
      this.#server.closeAllConnections();
    });
  }
}

async function handle(
  request: IncomingMessage,
  response: ServerResponse,
  expectedHost: string,
  tickets: TransferTickets,
  handlers: AssetServerHandlers,
): Promise<void> {
  const method = request.method;
  const preflightMethod = request.headers["access-control-request-method"];
  const code = unauthorizedCode(method === "OPTIONS" ? preflightMethod : method);
  // A page that rebinds a DNS name to 127.0.0.1 sends its own name here; such a request does nothing at all.
  if (request.headers.host !== expectedHost) {
    refuse(request, response, new PedelecError(code, "this server answers only requests addressed to its own loopback address"), { status: 421 });
    return;
  }
  const ticket = TRANSFER_PATH.exec(request.url ?? "")?.[1];
  if (ticket === undefined) {
    refuse(request, response, new PedelecError(code, "nothing is served here"), { status: 404 });
    return;
  }
  const record = tickets.peek(ticket);
  const origin = request.headers.origin;
  const originAllowed = record !== undefined && (origin === undefined || origin === record.origin);
  if (method === "OPTIONS") {
    preflight(request, response, record, code);
    return;
  }
  if (method !== "PUT" && method !== "GET") {
    response.setHeader("Allow", "GET, PUT, OPTIONS");
    refuse(request, response, new PedelecError(code, `${method ?? "this method"} is not used here`), { status: 405 });
    return;
  }
  if (!originAllowed) {
    const reason = record === undefined ? "this transfer ticket is not valid" : `this transfer ticket is not for ${origin}`;
    refuse(request, response, new PedelecError(code, reason));
    return;
  }
  const cors = corsHeaders(origin);
  const use = tickets.use(ticket);
  try {
    if (use.outcome === "unknown") throw new PedelecError(code, "this transfer ticket is not valid");
    if (use.outcome === "used") throw new PedelecError(code, "this transfer ticket was already used; each ticket is good for one request");
    if (use.outcome === "ended") throw new PedelecError("SESSION_ENDED", `session ${use.record.sessionId} has ended`);
    const direction = use.record.direction;
    if (use.outcome === "expired") {
      throw new PedelecError(
        direction === "upload" ? "ASSET_UPLOAD_TICKET_EXPIRED" : "ASSET_DOWNLOAD_TICKET_EXPIRED",
        "this transfer ticket has expired; ask for a new one",
      );
    }
    if (METHOD_OF[direction] !== method) throw new PedelecError(code, `this ticket is for an ${direction}, not a ${method}`);
    await (direction === "upload" ? handlers.upload : handlers.download)(use.record, request, response, cors);
  } catch (error) {
    const coded = PedelecError.from(error, method === "PUT" ? "ASSET_UPLOAD_FAILED" : "ASSET_READ_FAILED");
    if (response.headersSent || request.socket.destroyed) {
      response.destroy();
      return;
    }
    refuse(request, response, coded, { headers: cors });
  }
}

/**
 * Answers the browser's CORS preflight without spending the ticket: only for a ticket Core knows, only from its
 * session's origin, only for the ticket's own method. The Private Network Access opt-in is given on the same terms.
 */
function preflight(request: IncomingMessage, response: ServerResponse, record: TicketRecord | undefined, code: ErrorCode): void {
  const origin = request.headers.origin;
  const requestedMethod = request.headers["access-control-request-method"];
  if (record === undefined || origin !== record.origin || requestedMethod !== METHOD_OF[record.direction]) {
    refuse(request, response, new PedelecError(code, "this preflight is not for a transfer this origin may make"));
    return;
  }
  response.writeHead(204, {
    "Access-Control-Allow-Origin": origin,
    "Access-Control-Allow-Methods": requestedMethod,
    "Access-Control-Allow-Headers": "content-type",
    "Access-Control-Max-Age": "60",
    ...(request.headers["access-control-request-private-network"] === "true" ? { "Access-Control-Allow-Private-Network": "true" } : {}),
    Vary: "Origin, Access-Control-Request-Method, Access-Control-Request-Headers",
  });
  response.end();
}
