import type { ProviderCode, TurnKind } from "@pedelec/protocol/domain";
import type { SessionEventEnvelope } from "@pedelec/protocol/session-events";
import type { PedelecEventContext } from "./types.js";

/** The parts of a context that depend on what happened. */
export type ContextExtras = Pick<PedelecEventContext, "turnId" | "toolRequestId" | "messageId" | "endReason" | "turnUsage">;

/** Turn kinds are remembered for this many recent turns, so late events of a turn still carry it. */
const REMEMBERED_TURNS = 64;

/**
 * Builds the context a session's callbacks get, for what Core said (`source: "core"`) or what the SDK itself reports
 * (`source: "sdk"`), and remembers the kind of each recent turn so that every context naming a turn carries its kind.
 */
export class SessionEventContexts {
  readonly #sessionId: string;
  readonly #provider: ProviderCode;
  readonly #turnKinds = new Map<string, TurnKind>();

  constructor(sessionId: string, provider: ProviderCode) {
    this.#sessionId = sessionId;
    this.#provider = provider;
  }

  /** Remembers a turn's kind, as the newest turn. */
  noteTurn(turnId: string, kind: TurnKind): void {
    this.#turnKinds.delete(turnId);
    this.#turnKinds.set(turnId, kind);
    if (this.#turnKinds.size <= REMEMBERED_TURNS) return;
    const oldest = this.#turnKinds.keys().next();
    if (!oldest.done) this.#turnKinds.delete(oldest.value);
  }

  /** Forgets a turn that never ran. */
  forgetTurn(turnId: string): void {
    this.#turnKinds.delete(turnId);
  }

  turnKind(turnId: string): TurnKind | undefined {
    return this.#turnKinds.get(turnId);
  }

  /** The turns remembered, oldest first. */
  turnIds(): IterableIterator<string> {
    return this.#turnKinds.keys();
  }

  /** A context for what Core said: an event (with its seq and time), or a create/resume answer (now, no seq). */
  core(extras: ContextExtras = {}, envelope?: SessionEventEnvelope): PedelecEventContext {
    const base: PedelecEventContext = {
      sessionId: this.#sessionId,
      provider: this.#provider,
      source: "core",
      eventEmittedAt: envelope?.emittedAt ?? new Date().toISOString(),
    };
    if (envelope !== undefined) base.seq = envelope.seq;
    return this.#withExtras(base, extras);
  }

  /** A context for what the SDK reports itself. */
  sdk(extras: ContextExtras = {}): PedelecEventContext {
    return this.#withExtras(
      { sessionId: this.#sessionId, provider: this.#provider, source: "sdk", eventEmittedAt: new Date().toISOString() },
      extras,
    );
  }

  #withExtras(base: PedelecEventContext, extras: ContextExtras): PedelecEventContext {
    const context = { ...base };
    if (extras.turnId !== undefined) {
      context.turnId = extras.turnId;
      const turnKind = this.#turnKinds.get(extras.turnId);
      if (turnKind !== undefined) context.turnKind = turnKind;
    }
    if (extras.toolRequestId !== undefined) context.toolRequestId = extras.toolRequestId;
    if (extras.messageId !== undefined) context.messageId = extras.messageId;
    if (extras.endReason !== undefined) context.endReason = extras.endReason;
    if (extras.turnUsage !== undefined) context.turnUsage = Object.freeze({ ...extras.turnUsage });
    return context;
  }
}
