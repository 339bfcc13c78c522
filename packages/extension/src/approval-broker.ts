import { PedelecError } from "@pedelec/protocol/pedelec-error";
import type { ApprovalStore } from "./approval-store.js";
import type { ApprovalWindow } from "./approval-window.js";
import { Cooldowns } from "./cooldowns.js";
import type { WorkspaceConsentStore } from "./workspace-consent-store.js";

/** How long a page waits for the user before APPROVAL_TIMEOUT. */
export const DEFAULT_APPROVAL_TIMEOUT_MS = 5 * 60_000;
/** How long a refused origin (or folder) is answered at once instead of being asked about again. */
export const DEFAULT_REFUSAL_COOLDOWN_MS = 60_000;
/** How long a question nobody waits for any more stays up, so a page that reconnects and asks again rejoins it. */
export const DEFAULT_WITHDRAW_GRACE_MS = 3_000;
/** How long the window stays after the last question went away: the user sees the outcome, and a new question reuses it. */
export const DEFAULT_CLOSE_DELAY_MS = 1_000;

/** A question waiting for the user: may this origin use Pedelec, or may it use this folder? */
export type PendingApproval =
  | { readonly kind: "origin"; readonly approvalId: string; readonly origin: string; readonly requestedAt: string }
  | {
      readonly kind: "workspace";
      readonly approvalId: string;
      readonly origin: string;
      /** The normalized folder the origin's agent would work in. */
      readonly path: string;
      readonly requestedAt: string;
    };

export type ApprovalDecision = "approve" | "reject";
export type WorkspaceDecision = "allow" | "deny";

/** An origin the user refused recently; until `until` (ISO 8601) its requests are rejected without asking. */
export interface RefusedOrigin {
  readonly origin: string;
  readonly until: string;
}

export interface ApprovalBrokerOptions {
  store: ApprovalStore;
  consents: WorkspaceConsentStore;
  /** The single window listing every pending question. A failure to show it becomes OPEN_POPUP_FAILED. */
  window: ApprovalWindow;
  timeoutMs?: number;
  cooldownMs?: number;
  withdrawGraceMs?: number;
  closeDelayMs?: number;
  createId?: () => string;
  now?: () => Date;
  /** Called whenever the pending or refused lists change, so open extension pages can refresh. */
  onChange?: () => void;
}

interface Waiter {
  resolve: () => void;
  reject: (error: PedelecError) => void;
}

interface Question {
  readonly key: string;
  readonly view: PendingApproval;
  readonly waiters: Set<Waiter>;
  readonly timeout: ReturnType<typeof setTimeout>;
  grace?: ReturnType<typeof setTimeout>;
}

/**
 * Asks the user, in one window, whether an origin may use Pedelec and whether it may use a given folder.
 * Every request waiting on the same question shares it (also one that comes back shortly after leaving); the window
 * opens with the first question and closes once none is left. A refusal, or closing the window, is answered at
 * once for a while instead of asking again. A question settles by the user's choice, the timeout, or a window that
 * could not open.
 */
export class ApprovalBroker {
  readonly #questions = new Map<string, Question>();
  readonly #refusedOrigins: Cooldowns<string>;
  readonly #refusedFolders: Cooldowns<{ origin: string; path: string }>;
  readonly #timeoutMs: number;
  readonly #cooldownMs: number;
  readonly #withdrawGraceMs: number;
  readonly #closeDelayMs: number;
  readonly #createId: () => string;
  readonly #now: () => Date;
  #closeTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(private readonly options: ApprovalBrokerOptions) {
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_APPROVAL_TIMEOUT_MS;
    this.#cooldownMs = options.cooldownMs ?? DEFAULT_REFUSAL_COOLDOWN_MS;
    this.#withdrawGraceMs = options.withdrawGraceMs ?? DEFAULT_WITHDRAW_GRACE_MS;
    this.#closeDelayMs = options.closeDelayMs ?? DEFAULT_CLOSE_DELAY_MS;
    this.#createId = options.createId ?? (() => crypto.randomUUID());
    this.#now = options.now ?? (() => new Date());
    this.#refusedOrigins = new Cooldowns(this.#now);
    this.#refusedFolders = new Cooldowns(this.#now);
    options.window.onDismissed(() => this.#dismissAll());
  }

  /** The pending questions, oldest first. */
  list(): PendingApproval[] {
    return [...this.#questions.values()].map((question) => question.view);
  }

  /** Origins whose refusal is still cooling down. */
  refusedOrigins(): RefusedOrigin[] {
    return this.#refusedOrigins.list().map(({ subject, until }) => ({ origin: subject, until: until.toISOString() }));
  }

  /**
   * Resolves once `origin` is approved and stored. Rejects with APPROVAL_REJECTED (also at once while a refusal
   * cools down), APPROVAL_TIMEOUT, OPEN_POPUP_FAILED or STORAGE_ERROR; an aborted signal only withdraws this caller.
   */
  waitForApproval(origin: string, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(abortError(signal));
    const key = originKey(origin);
    const refused = this.#refusedOrigins.get(key);
    if (refused) {
      return Promise.reject(
        new PedelecError("APPROVAL_REJECTED", `the user rejected ${origin}; it may ask again ${describeWait(refused.until, this.#now())}`, {
          origin,
          retryAfter: refused.until.toISOString(),
        }),
      );
    }
    const question = this.#questions.get(key) ?? this.#open(key, { kind: "origin", origin });
    return this.#join(question, signal);
  }

  /**
   * Resolves once the user allowed `origin` to use the folder `path` (normalized) and the consent is stored.
   * Rejects with WORKSPACE_PATH_INVALID when the user refuses (also at once while that refusal cools down, and while
   * the origin already asks about another folder), APPROVAL_TIMEOUT, OPEN_POPUP_FAILED or STORAGE_ERROR.
   */
  waitForWorkspaceConsent(origin: string, path: string, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(abortError(signal));
    const key = folderKey(origin, path);
    const refused = this.#refusedFolders.get(key);
    if (refused) {
      return Promise.reject(
        new PedelecError(
          "WORKSPACE_PATH_INVALID",
          `the user did not allow ${origin} to use ${path}; it may ask again ${describeWait(refused.until, this.#now())}`,
          { origin, path, retryAfter: refused.until.toISOString() },
        ),
      );
    }
    let question = this.#questions.get(key);
    if (!question) {
      // One folder question per origin at a time, so a page cannot fill the window with folders.
      for (const other of this.#questions.values()) {
        if (other.view.kind !== "workspace" || other.view.origin !== origin) continue;
        if (other.waiters.size > 0) {
          return Promise.reject(
            new PedelecError(
              "WORKSPACE_PATH_INVALID",
              `${origin} is already asking the user about ${other.view.path}; ask about one folder at a time`,
              { origin, path },
            ),
          );
        }
        this.#finish(other);
      }
      question = this.#open(key, { kind: "workspace", origin, path });
    }
    return this.#join(question, signal);
  }

  /**
   * Applies the user's choice for `origin`. Approving persists the origin first, so waiters only continue once it
   * is stored, and ends a running refusal; approving with nothing pending still stores it (the choice came from the
   * extension's own pages). Rejecting starts the refusal cooldown.
   */
  async decide(origin: string, decision: ApprovalDecision): Promise<void> {
    const question = this.#questions.get(originKey(origin));
    if (decision === "reject") {
      const until = this.#refuse(this.#refusedOrigins, originKey(origin), origin);
      if (question) this.#settle(question, originRejected(origin, `the user rejected ${origin}`, until));
      this.options.onChange?.();
      return;
    }
    try {
      await this.options.store.approve(origin);
    } catch (error) {
      const failure = PedelecError.from(error, "STORAGE_ERROR");
      if (question) this.#settle(question, failure);
      throw failure;
    }
    this.#refusedOrigins.clear(originKey(origin));
    if (question) this.#settle(question);
    this.options.onChange?.();
  }

  /** Applies the user's choice about `origin` using the folder `path`; allowing stores the consent first. */
  async decideWorkspace(origin: string, path: string, decision: WorkspaceDecision): Promise<void> {
    const key = folderKey(origin, path);
    const question = this.#questions.get(key);
    if (decision === "deny") {
      const until = this.#refuse(this.#refusedFolders, key, { origin, path });
      if (question) this.#settle(question, folderDenied(origin, path, `the user did not allow ${origin} to use ${path}`, until));
      return;
    }
    try {
      await this.options.consents.allow(origin, path);
    } catch (error) {
      const failure = PedelecError.from(error, "STORAGE_ERROR");
      if (question) this.#settle(question, failure);
      throw failure;
    }
    this.#refusedFolders.clear(key);
    if (question) this.#settle(question);
  }

  #open(key: string, subject: { kind: "origin"; origin: string } | { kind: "workspace"; origin: string; path: string }): Question {
    const view: PendingApproval = { ...subject, approvalId: this.#createId(), requestedAt: this.#now().toISOString() };
    const timeout = setTimeout(() => {
      const seconds = Math.round(this.#timeoutMs / 1000);
      this.#settle(question, new PedelecError("APPROVAL_TIMEOUT", `no answer about ${describe(view)} within ${seconds} s`));
    }, this.#timeoutMs);
    const question: Question = { key, view, waiters: new Set(), timeout };
    this.#questions.set(key, question);
    clearTimeout(this.#closeTimer);
    this.options.onChange?.();
    // A window that is already open lists the new question as soon as it refreshes; show() only brings it forward.
    Promise.resolve()
      .then(() => this.options.window.show())
      .catch((error: unknown) => {
        const reason = error instanceof Error ? error.message : String(error);
        const failure = new PedelecError("OPEN_POPUP_FAILED", "could not open the approval window", { reason });
        // Without a window no pending question can be answered.
        for (const pending of [...this.#questions.values()]) this.#settle(pending, failure);
      });
    return question;
  }

  #join(question: Question, signal: AbortSignal | undefined): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const onAbort = (): void => {
        question.waiters.delete(waiter);
        reject(abortError(signal));
        if (question.waiters.size === 0) this.#withdrawn(question);
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
      clearTimeout(question.grace);
      question.grace = undefined;
      question.waiters.add(waiter);
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  /** Nobody waits any more: the question stays a moment for a page that asks again, then goes. */
  #withdrawn(question: Question): void {
    if (this.#withdrawGraceMs <= 0) {
      this.#finish(question);
      return;
    }
    question.grace = setTimeout(() => {
      if (question.waiters.size === 0) this.#finish(question);
    }, this.#withdrawGraceMs);
  }

  /** The user closed the window without answering: every question it showed counts as refused. */
  #dismissAll(): void {
    const questions = [...this.#questions.values()];
    for (const question of questions) {
      const view = question.view;
      if (view.kind === "origin") {
        const until = this.#refuse(this.#refusedOrigins, question.key, view.origin);
        this.#settle(question, originRejected(view.origin, `the approval window for ${view.origin} was closed without an answer`, until));
      } else {
        const until = this.#refuse(this.#refusedFolders, question.key, { origin: view.origin, path: view.path });
        const message = `the user did not allow ${view.origin} to use ${view.path} (the approval window was closed without an answer)`;
        this.#settle(question, folderDenied(view.origin, view.path, message, until));
      }
    }
    if (questions.length > 0) this.options.onChange?.();
  }

  #refuse<T>(cooldowns: Cooldowns<T>, key: string, subject: T): Date | undefined {
    cooldowns.start(key, subject, this.#cooldownMs);
    return cooldowns.get(key)?.until;
  }

  #settle(question: Question, error?: PedelecError): void {
    if (this.#questions.get(question.key) !== question) return;
    const waiters = [...question.waiters];
    this.#finish(question);
    for (const waiter of waiters) {
      if (error) waiter.reject(error);
      else waiter.resolve();
    }
  }

  #finish(question: Question): void {
    clearTimeout(question.timeout);
    clearTimeout(question.grace);
    question.waiters.clear();
    if (this.#questions.get(question.key) !== question) return;
    this.#questions.delete(question.key);
    this.options.onChange?.();
    if (this.#questions.size === 0) this.#scheduleClose();
  }

  #scheduleClose(): void {
    clearTimeout(this.#closeTimer);
    this.#closeTimer = setTimeout(() => {
      this.#closeTimer = undefined;
      if (this.#questions.size === 0) void this.options.window.close().catch(() => undefined);
    }, this.#closeDelayMs);
  }
}

function originKey(origin: string): string {
  return `origin ${origin}`;
}

function folderKey(origin: string, path: string): string {
  return `workspace ${origin} ${path}`;
}

function describe(view: PendingApproval): string {
  return view.kind === "origin" ? `the approval of ${view.origin}` : `${view.origin} using ${view.path}`;
}

function originRejected(origin: string, message: string, until: Date | undefined): PedelecError {
  return new PedelecError("APPROVAL_REJECTED", message, until ? { origin, retryAfter: until.toISOString() } : { origin });
}

function folderDenied(origin: string, path: string, message: string, until: Date | undefined): PedelecError {
  const details = until ? { origin, path, retryAfter: until.toISOString() } : { origin, path };
  return new PedelecError("WORKSPACE_PATH_INVALID", message, details);
}

/** "in 42 s (after 10:01:00 UTC)": readable in an error message shown to a developer. */
function describeWait(until: Date, now: Date): string {
  const seconds = Math.max(1, Math.ceil((until.getTime() - now.getTime()) / 1000));
  return `in ${seconds} s (after ${until.toISOString()})`;
}

function abortError(signal: AbortSignal | undefined): PedelecError {
  return PedelecError.from(signal?.reason ?? "aborted", "EXTENSION_DISCONNECTED", "the approval wait was cancelled");
}
