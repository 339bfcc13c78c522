import { PedelecError } from "@pedelec/protocol/pedelec-error";
import type { ExtensionToCoreRequestType, SessionRequestType } from "@pedelec/protocol/requests";
import type { FullAccessGrantStore } from "./full-access-grants.js";
import { consoleLogger, type Logger } from "./logger.js";
import type { RevocationStore } from "./revocation-store.js";

/** What revocations need of the native link. */
export interface RevocationLink {
  request(type: SessionRequestType | ExtensionToCoreRequestType, origin: string, payload: unknown): Promise<unknown>;
  onReopen(listener: () => void): () => void;
}

export interface FullAccessRevocationsOptions {
  link: RevocationLink;
  grants: FullAccessGrantStore;
  pending: RevocationStore;
  now?: () => number;
  logger?: Logger;
  /** Called when Core confirmed a revocation (the pending list shrank). */
  onChange?: () => void;
}

/**
 * Takes Full Access away from an origin and makes sure Core hears of it. A revocation is stored before anything else,
 * then sent at once; one that could not be delivered is sent again before every later request to Core and whenever
 * the native link reopens, until Core confirms it. Sends for one origin never overlap.
 */
export class FullAccessRevocations {
  readonly #inFlight = new Map<string, Promise<void>>();
  readonly #now: () => number;
  readonly #logger: Logger;

  constructor(private readonly options: FullAccessRevocationsOptions) {
    this.#now = options.now ?? Date.now;
    this.#logger = options.logger ?? consoleLogger;
    options.link.onReopen(() => void this.deliverAll());
  }

  /**
   * Revokes the origin's Full Access: stores the revocation, drops the grant, and starts telling Core. Resolves once
   * both are stored (STORAGE_ERROR otherwise); the delivery goes on, and `onChange` reports its success.
   */
  async revoke(origin: string): Promise<void> {
    const revokedAt = this.#now();
    await this.options.pending.add(origin, revokedAt);
    await this.options.grants.revoke(origin);
    void this.#deliver(origin, revokedAt).catch(() => undefined);
  }

  /** Sends every stored revocation; resolves when each was confirmed or failed (failures stay stored). */
  async deliverAll(): Promise<void> {
    let pending: Record<string, number>;
    try {
      pending = await this.options.pending.list();
    } catch (error) {
      this.#logger.warn("STORAGE_ERROR", "could not read the pending Full Access revocations", PedelecError.from(error, "STORAGE_ERROR").toWire());
      return;
    }
    await Promise.allSettled(Object.entries(pending).map(([origin, revokedAt]) => this.#deliver(origin, revokedAt)));
  }

  /**
   * Runs before a request of `origin` goes to Core: every stored revocation is sent first, so it travels ahead of the
   * request. Only the origin's own revocation is waited for; if it cannot be delivered the request is refused with that
   * error (the origin's Full Access might still be running), unless `proceedOnFailure` (requests that only stop
   * things). Other origins' failures never hold the request up.
   */
  async beforeRequest(origin: string, options: { proceedOnFailure?: boolean } = {}): Promise<void> {
    let pending: Record<string, number>;
    try {
      pending = await this.options.pending.list();
    } catch (error) {
      if (options.proceedOnFailure) return;
      throw error;
    }
    let own: Promise<void> | undefined;
    for (const [pendingOrigin, revokedAt] of Object.entries(pending)) {
      const delivery = this.#deliver(pendingOrigin, revokedAt);
      if (pendingOrigin === origin) own = delivery;
      else delivery.catch(() => undefined);
    }
    if (own === undefined) return;
    if (options.proceedOnFailure) await own.catch(() => undefined);
    else await own;
  }

  /** One delivery per origin at a time; a caller arriving meanwhile shares the one under way. */
  #deliver(origin: string, revokedAt: number): Promise<void> {
    const running = this.#inFlight.get(origin);
    if (running) return running;
    const delivery = this.#deliverUntilConfirmed(origin, revokedAt).finally(() => this.#inFlight.delete(origin));
    this.#inFlight.set(origin, delivery);
    return delivery;
  }

  async #deliverUntilConfirmed(origin: string, firstRevokedAt: number): Promise<void> {
    let revokedAt: number | undefined = firstRevokedAt;
    while (revokedAt !== undefined) {
      // The first send happens before any await, so it is on the wire before the caller's own request.
      try {
        await this.options.link.request("revokeFullAccess", origin, { revokedAt });
      } catch (error) {
        const failure = PedelecError.from(error, "NATIVE_CONNECTION_CLOSED");
        this.#logger.warn(failure.code, `could not deliver the Full Access revocation of ${origin}; it stays stored`, failure.toWire());
        throw failure;
      }
      await this.options.pending.confirm(origin, revokedAt);
      this.options.onChange?.();
      // A later revocation stored while this one travelled was kept by confirm(); it goes next.
      const next = await this.options.pending.pendingFor(origin);
      revokedAt = next !== undefined && next !== revokedAt ? next : undefined;
    }
  }
}
