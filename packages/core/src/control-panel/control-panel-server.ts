import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { ErrorCode } from "@pedelec/protocol/error-codes";
import { summarizeIssues } from "@pedelec/protocol/issue-summary";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import type { z } from "zod";
import { log } from "../logger.js";
import type { PanelErrorAnswer, PanelSignInCodeAnswer } from "./control-panel-wire.js";
import type { PanelEventStream } from "./panel-event-stream.js";
import { SECURITY_HEADERS, hostAllowed, refuseBare, sameOriginWrite, secretMatches, sameOriginRead, cookieValue } from "./panel-guard.js";
import type { PanelSignIn } from "./panel-sign-in.js";
import type { PanelUiFiles } from "./panel-ui-files.js";

/** The panel binds here only, never to a name DNS could point elsewhere. */
export const CONTROL_PANEL_HOST = "127.0.0.1";

/** Request bodies are small JSON edits; anything larger is refused before it is read whole. */
const MAX_BODY_BYTES = 64 * 1024;

const SECRET_PATH = /^\/([A-Za-z0-9_-]{1,128})(\/.*)?$/;
const SIGN_IN_PATH = /^\/sign-in\/([A-Za-z0-9_-]{1,128})$/;

/** Where a browser signed in with a cookie finds the panel: a clean address, no secret in it. */
export const PANEL_PREFIX = "panel";

/** The browser session's cookie; cookies are shared by every port of a host, so its name carries the panel's port. */
export function panelCookieName(port: number): string {
  return `pedelec-panel-${port}`;
}

/** What an API handler gets: the request's method, its path below `/api/`, its query and a reader for its JSON body. */
export interface PanelApiRequest {
  method: string;
  /** Path segments after `api`, decoded. */
  segments: string[];
  query: URLSearchParams;
  /** The JSON body, checked against `schema` (INVALID_INPUT when it does not fit). */
  body<T extends z.ZodType>(schema: T): Promise<z.infer<T>>;
}

/** Answers one API request with a JSON value, or throws a PedelecError; undefined when no route matches (404). */
export type PanelApiHandler = (request: PanelApiRequest) => Promise<unknown> | undefined;

export interface ControlPanelServerOptions {
  secret: string;
  /** The one-time codes `pedelec open` asks for, and the browser sessions they open. */
  signIn: PanelSignIn;
  api: PanelApiHandler;
  events: PanelEventStream;
  ui: PanelUiFiles;
  /** 0 (a random free port) unless a test needs one. */
  port?: number;
}

/**
 * The control panel's HTTP server on 127.0.0.1. Every path starts with the per-launch secret, or with `/panel/` and a
 * browser session's cookie (opened by a one-time code at `/sign-in/<code>`); a request whose Host is not the panel's
 * own loopback address, or with neither, gets a bare 421 or 404 and nothing else.
 */
export class ControlPanelServer {
  readonly #server: Server;
  readonly #port: number;

  private constructor(server: Server, port: number) {
    this.#server = server;
    this.#port = port;
  }

  static start(options: ControlPanelServerOptions): Promise<ControlPanelServer> {
    return new Promise((resolve, reject) => {
      let port = 0;
      const server = createServer({ headersTimeout: 30_000, requestTimeout: 60_000, keepAliveTimeout: 5_000 }, (request, response) => {
        handle(request, response, port, options).catch(() => {
          if (!response.headersSent) refuseBare(response, 404);
          else response.destroy();
        });
      });
      server.once("error", reject);
      server.listen(options.port ?? 0, CONTROL_PANEL_HOST, () => {
        server.off("error", reject);
        port = (server.address() as AddressInfo).port;
        resolve(new ControlPanelServer(server, port));
      });
    });
  }

  get port(): number {
    return this.#port;
  }

  /** Stops listening and cuts every connection, open event streams included. */
  close(): Promise<void> {
    return new Promise((resolve) => {
      this.#server.close(() => resolve());
      this.#server.closeAllConnections();
    });
  }
}

async function handle(request: IncomingMessage, response: ServerResponse, port: number, options: ControlPanelServerOptions): Promise<void> {
  // A rebinding page sends its own DNS name: it learns nothing, not even whether the secret was right.
  if (!hostAllowed(request.headers.host, port)) return refuseBare(response, 421);
  const target = request.url ?? "";
  const queryAt = target.indexOf("?");
  const path = queryAt === -1 ? target : target.slice(0, queryAt);
  const method = request.method ?? "GET";
  const signInMatch = SIGN_IN_PATH.exec(path);
  if (signInMatch !== null) return signIn(response, method, signInMatch[1]!, port, options.signIn);
  const match = SECRET_PATH.exec(path);
  if (match === null) return refuseBare(response, 404);
  let door: "secret" | "cookie";
  if (match[1] === PANEL_PREFIX) {
    // The cookie is sent to every port of 127.0.0.1, and to pages on them (same-site): only the panel's own page counts.
    if (!options.signIn.sessionOpen(cookieValue(request.headers.cookie, panelCookieName(port))) || !sameOriginRead(request)) {
      return refuseBare(response, 404);
    }
    door = "cookie";
  } else if (secretMatches(options.secret, match[1]!)) {
    door = "secret";
  } else {
    return refuseBare(response, 404);
  }
  const rest = match[2];
  if (rest === undefined) {
    // Relative addresses in the page resolve against the folder, so the secret's path always ends with a slash.
    response.writeHead(308, { ...SECURITY_HEADERS, Location: `/${match[1]}/`, "Content-Length": 0 });
    response.end();
    return;
  }
  if (!rest.startsWith("/api/")) {
    if (method !== "GET" && method !== "HEAD") return refuseBare(response, 405);
    const file = options.ui.get(rest);
    if (file === undefined) return refuseBare(response, 404);
    response.writeHead(200, { ...SECURITY_HEADERS, "Content-Type": file.contentType, "Content-Length": file.body.length });
    response.end(method === "HEAD" ? undefined : file.body);
    return;
  }
  let segments: string[];
  try {
    segments = rest
      .slice("/api/".length)
      .split("/")
      .map((segment) => decodeURIComponent(segment));
  } catch {
    return refuseBare(response, 404);
  }
  if (segments.length === 1 && segments[0] === "events") {
    if (method !== "GET") return refuseBare(response, 405);
    if (!options.events.accept(response)) refuseBare(response, 503);
    return;
  }
  if (method !== "GET" && !sameOriginWrite(request)) return refuseBare(response, 403);
  if (segments.length === 1 && segments[0] === "sign-in-codes") {
    // Only who holds the secret (`pedelec open`, which reads it from the 0600 address file) hands out codes.
    if (door !== "secret") return refuseBare(response, 404);
    if (method !== "POST") return refuseBare(response, 405);
    const { code, expiresAt } = options.signIn.issueCode();
    log("info", "control panel sign-in code issued", { expiresAt });
    const answer: PanelSignInCodeAnswer = { url: `http://${CONTROL_PANEL_HOST}:${port}/sign-in/${code}`, expiresAt };
    return sendJson(response, 200, answer);
  }
  const apiRequest: PanelApiRequest = {
    method,
    segments,
    query: new URLSearchParams(queryAt === -1 ? "" : target.slice(queryAt + 1)),
    body: (schema) => readJsonBody(request, schema),
  };
  try {
    const answer = options.api(apiRequest);
    if (answer === undefined) return refuseBare(response, 404);
    sendJson(response, 200, await answer);
  } catch (error) {
    const coded = PedelecError.from(error, "INVALID_INPUT");
    const body: PanelErrorAnswer = { error: { code: coded.code, message: coded.message } };
    sendJson(response, statusOf(coded.code), body);
  }
}

/**
 * A browser arriving with a one-time code: the first time, its session cookie and a redirect to the clean address;
 * otherwise a short page saying to run `pedelec open` again. Neither the code nor the cookie is ever logged.
 */
function signIn(response: ServerResponse, method: string, code: string, port: number, signInKeeper: PanelSignIn): void {
  if (method !== "GET") {
    refuseBare(response, 405);
    return;
  }
  const outcome = signInKeeper.redeem(code);
  if (outcome.ok) {
    log("info", "control panel: a browser signed in with a one-time code");
    response.writeHead(303, {
      ...SECURITY_HEADERS,
      Location: `/${PANEL_PREFIX}/`,
      "Set-Cookie": `${panelCookieName(port)}=${outcome.token}; Path=/${PANEL_PREFIX}/; Max-Age=${outcome.maxAgeSeconds}; HttpOnly; SameSite=Strict`,
      "Content-Length": 0,
    });
    response.end();
    return;
  }
  const text =
    outcome.reason === "replayed"
      ? "This sign-in link was already used, so the control panel closed the session it had opened. Run `pedelec open` again. If you did not open it twice, someone else on this machine may have seen the link.\n"
      : "This sign-in link has expired or was already used. Run `pedelec open` again.\n";
  if (outcome.reason === "replayed") log("warn", "control panel: a sign-in code was used twice; the session it opened is closed");
  else log("info", "control panel: refused an unknown or expired sign-in code");
  response.writeHead(403, { ...SECURITY_HEADERS, "Content-Type": "text/plain; charset=utf-8", "Content-Length": Buffer.byteLength(text) });
  response.end(text);
}

const STATUS_BY_CODE: Partial<Record<ErrorCode, number>> = {
  INVALID_INPUT: 400,
  EFFORT_PROFILE_INVALID: 400,
  MESSAGE_TOO_LARGE: 413,
  THREAD_NOT_FOUND: 404,
  SESSION_ENDED: 409,
};

function statusOf(code: ErrorCode): number {
  return STATUS_BY_CODE[code] ?? 500;
}

function sendJson(response: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  response.writeHead(status, {
    ...SECURITY_HEADERS,
    "Content-Type": "application/json; charset=utf-8",
    "Content-Length": Buffer.byteLength(text),
  });
  response.end(text);
}

async function readJsonBody<T extends z.ZodType>(request: IncomingMessage, schema: T): Promise<z.infer<T>> {
  const type = request.headers["content-type"] ?? "";
  if (!/^application\/json(;|$)/i.test(type)) throw new PedelecError("INVALID_INPUT", "the body must be JSON (Content-Type: application/json)");
  const declared = Number(request.headers["content-length"] ?? 0);
  if (declared > MAX_BODY_BYTES) throw new PedelecError("MESSAGE_TOO_LARGE", `the body is larger than ${MAX_BODY_BYTES} bytes`);
  const chunks: Buffer[] = [];
  let length = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    length += chunk.length;
    if (length > MAX_BODY_BYTES) throw new PedelecError("MESSAGE_TOO_LARGE", `the body is larger than ${MAX_BODY_BYTES} bytes`);
    chunks.push(chunk);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.concat(chunks).toString("utf8"));
  } catch {
    throw new PedelecError("INVALID_INPUT", "the body is not valid JSON");
  }
  const checked = schema.safeParse(parsed);
  if (!checked.success) {
    const summary = summarizeIssues(checked.error.issues);
    throw new PedelecError("INVALID_INPUT", `invalid request: ${summary.message}`, summary.details);
  }
  return checked.data as z.infer<T>;
}
