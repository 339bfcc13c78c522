import { PedelecError } from "@pedelec/protocol/pedelec-error";
import type { ApprovalStore } from "./approval-store.js";

/** How long a page waits for the user before APPROVAL_TIMEOUT. */
export const DEFAULT_APPROVAL_TIMEOUT_MS = 5 * 60_000;

export interface PendingApproval {
  readonly approvalId: string;
  readonly origin: string;
  /** ISO 8601 time of the first request that asked. */
  readonly requestedAt: string;
}

export type ApprovalDecision = "approve" | "reject";

export interface ApprovalBrokerOptions {
  store: ApprovalStore;
  /**
   * Shows the approval UI for one pending approval; a rejection becomes OPEN_POPUP_FAILED. `onDismissed` is called
   * if the user closes that UI: an approval still pending then counts as rejected.
   */
  openPopup: (approvalId: string, onDismissed: () => void) => Promise<void>;
  timeoutMs?: number;
  createId?: () => string;
  now?: () => Date;
  /** Called whenever the pending list changes, so an open popup can refresh. */
  onChange?: () => void;
}

interface Waiter {
  resolve: () => void;
  reject: (error: PedelecError) => void;
}

interface PendingEntry extends PendingApproval {
  waiters: Set<Waiter>;
  timer: ReturnType<typeof setTimeout>;
}

/**
 * Asks the user once per origin: every request from an origin that waits at the same time shares one pending
 * approval and one popup. Settles by the user's choice, the timeout, or a popup that could not open.
 */
export class ApprovalBroker {
  readonly #pending = new Map<string, PendingEntry>();
  readonly #timeoutMs: number;
  readonly #createId: () => string;
  readonly #now: () => Date;

  constructor(private readonly options: ApprovalBrokerOptions) {
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_APPROVAL_TIMEOUT_MS;
    this.#createId = options.createId ?? (() => crypto.randomUUID());
    this.#now = options.now ?? (() => new Date());
  }

  list(): PendingApproval[] {
    return [...this.#pending.values()].map(({ approvalId, origin, requestedAt }) => ({ approvalId, origin, requestedAt }));
  }

  /**
   * Resolves once `origin` is approved and stored. Rejects with APPROVAL_REJECTED, APPROVAL_TIMEOUT,
   * OPEN_POPUP_FAILED or STORAGE_ERROR; an aborted signal only withdraws this caller.
   */
  waitForApproval(origin: string, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(abortError(signal));
    return new Promise<void>((resolve, reject) => {
      const entry = this.#pending.get(origin) ?? this.#open(origin);
      const onAbort = (): void => {
        entry.waiters.delete(waiter);
        reject(abortError(signal));
        // Nobody is waiting any more: drop the question rather than leave a stale prompt behind.
        if (entry.waiters.size === 0) this.#finish(entry);
      };
      const waiter: Waiter = {
        resolve: () => {
          signal?.removeEventListener("abort", onAbort);
          resolve();
        },
        reject: (error) => {
          signal?.removeEventListener("abort", onAbort);
          reject(error);
        },
      };
      entry.waiters.add(waiter);
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  /**
   * Applies the user's choice for `origin`. Approving persists the origin first, so waiters only continue once it
   * is stored; approving an origin with nothing pending still stores it (the choice came from the extension's own UI).
   */
  async decide(origin: string, decision: ApprovalDecision): Promise<void> {
    const entry = this.#pending.get(origin);
    if (decision === "reject") {
      if (entry) this.#settle(entry, new PedelecError("APPROVAL_REJECTED", `the user rejected ${origin}`));
      return;
    }
    try {
      await this.options.store.approve(origin);
    } catch (error) {
      const failure = PedelecError.from(error, "STORAGE_ERROR");
      if (entry) this.#settle(entry, failure);
      throw failure;
    }
    if (entry) this.#settle(entry);
  }

  #open(origin: string): PendingEntry {
    const approvalId = this.#createId();
    const timer = setTimeout(() => {
      const seconds = Math.round(this.#timeoutMs / 1000);
      this.#settle(entry, new PedelecError("APPROVAL_TIMEOUT", `no answer to the approval of ${origin} within ${seconds} s`));
    }, this.#timeoutMs);
    const entry: PendingEntry = { approvalId, origin, requestedAt: this.#now().toISOString(), waiters: new Set(), timer };
    this.#pending.set(origin, entry);
    this.options.onChange?.();
    Promise.resolve()
      .then(() =>
        this.options.openPopup(approvalId, () =>
          this.#settle(entry, new PedelecError("APPROVAL_REJECTED", `the approval window for ${origin} was closed without an answer`)),
        ),
      )
      .catch((error: unknown) => {
        const reason = error instanceof Error ? error.message : String(error);
        this.#settle(entry, new PedelecError("OPEN_POPUP_FAILED", "could not open the approval popup", { reason }));
      });
    return entry;
  }

  #settle(entry: PendingEntry, error?: PedelecError): void {
    if (this.#pending.get(entry.origin) !== entry) return;
    const waiters = [...entry.waiters];
    this.#finish(entry);
    for (const waiter of waiters) {
      if (error) waiter.reject(error);
      else waiter.resolve();
    }
  }

  #finish(entry: PendingEntry): void {
    clearTimeout(entry.timer);
    entry.waiters.clear();
    if (this.#pending.get(entry.origin) === entry) {
      this.#pending.delete(entry.origin);
      this.options.onChange?.();
    }
  }
}

function abortError(signal: AbortSignal | undefined): PedelecError {
  return PedelecError.from(signal?.reason ?? "aborted", "EXTENSION_DISCONNECTED", "the approval wait was cancelled");
}
