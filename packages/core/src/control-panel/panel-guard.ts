import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from "node:http";

/** 32 random bytes, base64url: the panel's only credential, new at every Core start and kept in memory. */
export function newPanelSecret(): string {
  return randomBytes(32).toString("base64url");
}

/** Compares a presented secret with the real one in time that does not depend on where they differ. */
export function secretMatches(expected: string, presented: string): boolean {
  // Digests have one length whatever was presented, so even the length is not given away.
  const digest = (text: string): Buffer => createHash("sha256").update(text, "utf8").digest();
  return timingSafeEqual(digest(expected), digest(presented));
}

/**
 * The Host names the panel answers: its own loopback address and `localhost`, with its port. A page that rebinds a
 * DNS name of its own to 127.0.0.1 sends that name, and gets nothing.
 */
export function hostAllowed(host: string | undefined, port: number): boolean {
  return host === `127.0.0.1:${port}` || host === `localhost:${port}`;
}

/**
 * Sent with every answer, refusals included: only the panel's own files run and load, nothing may frame it, no
 * address leaks through a referrer, nothing is cached. No CORS header is ever sent, so other origins read nothing.
 */
export const SECURITY_HEADERS: OutgoingHttpHeaders = {
  "Content-Security-Policy":
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  "Referrer-Policy": "no-referrer",
  "X-Frame-Options": "DENY",
  "X-Content-Type-Options": "nosniff",
  "Cache-Control": "no-store",
  "Cross-Origin-Opener-Policy": "same-origin",
  "Cross-Origin-Resource-Policy": "same-origin",
};

/** A bare refusal: the status and the security headers, no body that could tell anything. */
export function refuseBare(response: ServerResponse, status: 404 | 405 | 421 | 403 | 413 | 503): void {
  response.writeHead(status, { ...SECURITY_HEADERS, "Content-Length": 0 });
  response.end();
}

/**
 * Whether a request that changes something comes from the panel's own page: browsers send `Origin` with every POST,
 * PUT and fetch, so another site's form or script (which cannot know the secret anyway) is refused here too.
 */
export function sameOriginWrite(request: IncomingMessage): boolean {
  const origin = request.headers.origin;
  const host = request.headers.host;
  if (origin === undefined) return request.headers["sec-fetch-site"] === undefined || request.headers["sec-fetch-site"] === "same-origin";
  return host !== undefined && origin === `http://${host}`;
}

/**
 * Whether a request under the cookie's door comes from the panel's own page or from the user (typing the address,
 * a bookmark): `Sec-Fetch-Site` is `same-origin` or `none`, or absent (not a browser). A page on another port of
 * 127.0.0.1 is same-site, so its requests carry the cookie; this is what refuses them.
 */
export function sameOriginRead(request: IncomingMessage): boolean {
  const site = request.headers["sec-fetch-site"];
  return site === undefined || site === "same-origin" || site === "none";
}

/** The value of cookie `name` in a Cookie header, or undefined. */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  if (header === undefined) return undefined;
  for (const part of header.split(";")) {
    const equals = part.indexOf("=");
    if (equals !== -1 && part.slice(0, equals).trim() === name) return part.slice(equals + 1).trim();
  }
  return undefined;
}
