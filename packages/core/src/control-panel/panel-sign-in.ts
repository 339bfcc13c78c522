import { createHash, randomBytes } from "node:crypto";

/** How long a sign-in code may wait for the browser: long enough for a browser to start, short enough to be dead soon. */
export const SIGN_IN_CODE_TTL_MS = 60_000;
/** How long a browser stays signed in (it must sign in again after this, or when Core restarts). */
export const BROWSER_SESSION_TTL_MS = 12 * 60 * 60 * 1000;
/** Codes waiting to be used, and browsers signed in, at most; the oldest goes first. */
const MAX_PENDING_CODES = 16;
const MAX_BROWSER_SESSIONS = 32;

export interface PanelSignInOptions {
  codeTtlMs?: number;
  browserSessionTtlMs?: number;
  /** The clock; tests move it. */
  now?: () => number;
}

/** What a presented code led to: a browser session (its token goes into the cookie), or why not. */
export type SignInOutcome = { ok: true; token: string; maxAgeSeconds: number } | { ok: false; reason: "unknown" | "expired" | "replayed" };

interface PendingCode {
  expiresAtMs: number;
  /** Set once the code was used: the digest of the browser session it opened, closed again if the code comes back. */
  openedSession?: string;
}

/**
 * The panel's sign-in, so that the long-lived secret never has to reach a browser through a command line. `pedelec
 * open` (which holds the secret) asks for a code; the browser is opened on `/sign-in/<code>`; the code is good once,
 * for a minute, and turns into a browser session token that the panel keeps in an HttpOnly cookie. Codes and tokens are
 * 256 random bits, kept in memory only and only as SHA-256 digests, and are never logged.
 *
 * A code travels through the opener's argv, which other local users can read while it runs. One who races the browser
 * and uses the code first gets a session, but only until the browser arrives: a code presented a second time closes the
 * session it opened, and the browser is told to run `pedelec open` again.
 */
export class PanelSignIn {
  readonly #codes = new Map<string, PendingCode>();
  readonly #sessions = new Map<string, number>();
  readonly #codeTtlMs: number;
  readonly #sessionTtlMs: number;
  readonly #now: () => number;

  constructor(options: PanelSignInOptions = {}) {
    this.#codeTtlMs = options.codeTtlMs ?? SIGN_IN_CODE_TTL_MS;
    this.#sessionTtlMs = options.browserSessionTtlMs ?? BROWSER_SESSION_TTL_MS;
    this.#now = options.now ?? Date.now;
  }

  /** A new single-use code and when it stops working. */
  issueCode(): { code: string; expiresAt: string } {
    this.#sweep();
    const code = randomBytes(32).toString("base64url");
    const expiresAtMs = this.#now() + this.#codeTtlMs;
    this.#codes.set(digest(code), { expiresAtMs });
    trimOldest(this.#codes, MAX_PENDING_CODES);
    return { code, expiresAt: new Date(expiresAtMs).toISOString() };
  }

  /** Uses `code`: the first time (within its lifetime) it opens a browser session; a second time it closes that session. */
  redeem(code: string): SignInOutcome {
    this.#sweep();
    const key = digest(code);
    const pending = this.#codes.get(key);
    if (pending === undefined) return { ok: false, reason: "unknown" };
    if (pending.openedSession !== undefined) {
      // Someone used it before: whoever that was, the session it opened is closed, and the code is forgotten.
      this.#sessions.delete(pending.openedSession);
      this.#codes.delete(key);
      return { ok: false, reason: "replayed" };
    }
    if (this.#now() >= pending.expiresAtMs) {
      this.#codes.delete(key);
      return { ok: false, reason: "expired" };
    }
    const token = randomBytes(32).toString("base64url");
    const session = digest(token);
    this.#sessions.set(session, this.#now() + this.#sessionTtlMs);
    trimOldest(this.#sessions, MAX_BROWSER_SESSIONS);
    // Kept until it would have expired, so a second use is recognized as one.
    pending.openedSession = session;
    return { ok: true, token, maxAgeSeconds: Math.floor(this.#sessionTtlMs / 1000) };
  }

  /** Whether `token` (a cookie's value) is a browser session that is still open. */
  sessionOpen(token: string | undefined): boolean {
    if (token === undefined || token === "") return false;
    const expiresAtMs = this.#sessions.get(digest(token));
    if (expiresAtMs === undefined) return false;
    if (this.#now() < expiresAtMs) return true;
    this.#sessions.delete(digest(token));
    return false;
  }

  #sweep(): void {
    const now = this.#now();
    for (const [key, pending] of this.#codes) if (now >= pending.expiresAtMs) this.#codes.delete(key);
    for (const [key, expiresAtMs] of this.#sessions) if (now >= expiresAtMs) this.#sessions.delete(key);
  }
}

/** Lookups go by digest: what is kept in memory is not the code or token itself, and timing tells nothing about them. */
function digest(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("base64url");
}

function trimOldest<V>(map: Map<string, V>, limit: number): void {
  for (const key of map.keys()) {
    if (map.size <= limit) return;
    map.delete(key);
  }
}
