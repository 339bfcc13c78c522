import { PedelecError } from "@pedelec/protocol/pedelec-error";
import type { SessionInfo } from "@pedelec/protocol/requests";
import type { ScriptRunResult } from "@pedelec/protocol/script-run";
import type { RunInput } from "./session-scripts.js";

/**
 * What Core keeps of a session once it has ended: who owns it, the info `resumeSession` still answers (status
 * "ended") and the capability digest, so its agent learns the session ended rather than that it never existed.
 * Tools, the provider adapter, listeners, timers and script runs are gone with the session object.
 */
export class EndedSession {
  readonly ended = true;
  readonly #info: SessionInfo;

  constructor(
    readonly origin: string,
    info: SessionInfo,
    readonly capabilityDigest: Buffer,
    /** When the session ended, in ms since the epoch. */
    readonly endedAt: number,
  ) {
    this.#info = { ...info, status: "ended", workspace: { ...info.workspace }, toolNames: [...info.toolNames] };
  }

  get id(): string {
    return this.#info.sessionId;
  }

  /** Already aborted: whatever would bind itself to the session stops at once. */
  get endedSignal(): AbortSignal {
    return AbortSignal.abort(this.#endedError());
  }

  /** The workspace the session had; a managed one has been removed. */
  get setup(): { readonly workspace: { readonly path: string } } {
    return { workspace: this.#info.workspace };
  }

  get scripts(): {
    run: (input: RunInput) => Promise<ScriptRunResult>;
    cancel: (runId: string, reason: PedelecError) => boolean;
  } {
    return { run: () => Promise.reject(this.#endedError()), cancel: () => false };
  }

  info(): SessionInfo {
    return { ...this.#info, workspace: { ...this.#info.workspace }, toolNames: [...this.#info.toolNames] };
  }

  startTurn(_turnId: string, _text: string): never {
    throw this.#endedError();
  }

  cancelTurn(): boolean {
    return false;
  }

  prepare(_turnId: string): never {
    throw this.#endedError();
  }

  claimToolCall(_toolRequestId: string, _claimant: string): never {
    throw this.#endedError();
  }

  submitToolResult(_toolRequestId: string, _outcome: unknown, _claimant?: string): never {
    throw this.#endedError();
  }

  /** Ending an ended session changes nothing; false says so, as it does for a live session ended twice. */
  end(_reason: string): Promise<boolean> {
    return Promise.resolve(false);
  }

  #endedError(): PedelecError {
    return new PedelecError("SESSION_ENDED", `session ${this.id} has ended`);
  }
}

export interface EndedSessionLimits {
  /** The most ended sessions remembered; the oldest are forgotten first. */
  maxCount: number;
  /** How long an ended session is remembered. */
  maxAgeMs: number;
}

export const DEFAULT_ENDED_SESSION_LIMITS: EndedSessionLimits = { maxCount: 1_000, maxAgeMs: 24 * 60 * 60_000 };

/** Ended sessions, oldest first, bounded in number and age. */
export class EndedSessions {
  readonly #sessions = new Map<string, EndedSession>();

  constructor(
    private readonly limits: EndedSessionLimits,
    private readonly now: () => number,
  ) {}

  get size(): number {
    this.#forgetExpired();
    return this.#sessions.size;
  }

  add(session: EndedSession): void {
    this.#sessions.delete(session.id);
    this.#sessions.set(session.id, session);
    this.#forgetExpired();
    for (const id of this.#sessions.keys()) {
      if (this.#sessions.size <= this.limits.maxCount) break;
      this.#sessions.delete(id);
    }
  }

  get(id: string): EndedSession | undefined {
    this.#forgetExpired();
    return this.#sessions.get(id);
  }

  #forgetExpired(): void {
    const oldestKept = this.now() - this.limits.maxAgeMs;
    // Insertion order is end order, so the expired ones are all at the front.
    for (const [id, session] of this.#sessions) {
      if (session.endedAt > oldestKept) break;
      this.#sessions.delete(id);
    }
  }
}
