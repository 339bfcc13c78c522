import { createHash, randomBytes } from "node:crypto";

export type TransferDirection = "upload" | "download";

/** What a ticket lets its bearer do, fixed when it is issued: nothing in the request can change it. */
export interface TicketGrant {
  direction: TransferDirection;
  sessionId: string;
  /** The page origin of the session: the only origin the asset server answers for this ticket. */
  origin: string;
  /** The asset path as the page gave it ("/…"). */
  assetPath: string;
  /** The session's workspace (its real path). */
  workspacePath: string;
  /** Uploads only: the exact body length the page declared. */
  declaredBytes?: number;
  /** Aborts when the session ends. */
  sessionEnded: AbortSignal;
}

export type TicketState = "open" | "used" | "ended";

export interface TicketRecord extends TicketGrant {
  expiresAtMs: number;
  state: TicketState;
}

/** Why a ticket could not be used, or the grant it carries. */
export type TicketUse =
  | { outcome: "granted"; record: TicketRecord }
  | { outcome: "unknown" }
  | { outcome: "used" | "expired" | "ended"; record: TicketRecord };

export interface TransferTicketsOptions {
  ttlMs: number;
  now: () => number;
}

/**
 * Single-use, short-lived transfer tickets, kept in memory only. A ticket is 32 random bytes (base64url); only its
 * SHA-256 is stored, so a lookup compares digests of a secret and never the secret itself. A spent, expired or ended
 * ticket is remembered for one more lifetime so its bearer gets a precise answer, then forgotten.
 */
export class TransferTickets {
  readonly #records = new Map<string, TicketRecord>();

  constructor(private readonly options: TransferTicketsOptions) {}

  issue(grant: TicketGrant): { ticket: string; expiresAtMs: number } {
    this.#prune();
    const ticket = randomBytes(32).toString("base64url");
    const expiresAtMs = this.options.now() + this.options.ttlMs;
    this.#records.set(digest(ticket), { ...grant, expiresAtMs, state: "open" });
    return { ticket, expiresAtMs };
  }

  /** The record behind `ticket`, without spending it (preflights and origin checks). */
  peek(ticket: string): TicketRecord | undefined {
    return this.#records.get(digest(ticket));
  }

  /** Spends the ticket: whatever the answer, it cannot be used again. */
  use(ticket: string): TicketUse {
    this.#prune();
    const record = this.#records.get(digest(ticket));
    if (record === undefined) return { outcome: "unknown" };
    const state = record.sessionEnded.aborted ? "ended" : record.state;
    if (state !== "open") return { outcome: state, record };
    record.state = "used";
    if (this.options.now() >= record.expiresAtMs) return { outcome: "expired", record };
    return { outcome: "granted", record };
  }

  /** Tickets of `sessionId` in `direction` that could still be used. */
  openCount(sessionId: string, direction: TransferDirection): number {
    const now = this.options.now();
    let count = 0;
    for (const record of this.#records.values()) {
      if (record.sessionId === sessionId && record.direction === direction && record.state === "open" && now < record.expiresAtMs) count += 1;
    }
    return count;
  }

  /** Spends every still-open ticket of `sessionId` in `direction` (a newer one replaces them); returns how many. */
  supersede(sessionId: string, direction: TransferDirection): number {
    let spent = 0;
    for (const record of this.#records.values()) {
      if (record.sessionId === sessionId && record.direction === direction && record.state === "open") {
        record.state = "used";
        spent += 1;
      }
    }
    return spent;
  }

  /** The session ended: none of its tickets works any more, and their bearers are told so. */
  endSession(sessionId: string): void {
    for (const record of this.#records.values()) {
      if (record.sessionId === sessionId) record.state = "ended";
    }
  }

  #prune(): void {
    const now = this.options.now();
    for (const [key, record] of this.#records) {
      if (now >= record.expiresAtMs + this.options.ttlMs) this.#records.delete(key);
    }
  }
}

function digest(ticket: string): string {
  return createHash("sha256").update(ticket).digest("base64url");
}
