import { type ErrorCode, isErrorCode } from "./error-codes.js";
import { remedyFor } from "./error-remedies.js";
import type { WireError } from "./wire-error.js";

export type { WireError };

/**
 * The one error type of Pedelec. Every failure that crosses a boundary is a PedelecError with a code from
 * the catalogue; `toWire()` and `fromWire()` carry it across hops unchanged. Decide by `code`; show the user
 * `message` and, under it, `remedy`: what to do next.
 *
 * @example
 * ```ts
 * try { await session.sendText("hi"); }
 * catch (error) {
 *   if (error instanceof PedelecError && error.code === "SESSION_BUSY") { showBusy(); }
 *   else if (error instanceof PedelecError) { showError(`${error.message}. ${error.remedy}`); }
 * }
 * ```
 */
export class PedelecError extends Error {
  /** A code from the catalogue, e.g. `"SESSION_BUSY"`. */
  readonly code: ErrorCode;
  /** Extra machine-readable context, such as a provider's stderr or a schema issue list. */
  readonly details?: unknown;

  constructor(code: ErrorCode, message: string, details?: unknown) {
    super(message);
    this.name = "PedelecError";
    this.code = code;
    if (details !== undefined) this.details = details;
  }

  /**
   * What the user or the developer does next, in a sentence or two: the command to run (`npx pedelec install`,
   * `codex login`…), the setting to change, or that nothing needs fixing (a new message resumes the session).
   * Worked out from `code` and `details` (which provider, what caused it) wherever the error is read, so it is not
   * sent over the wire. docs/errors.md lists every code's remedy.
   *
   * @example
   * ```ts
   * session.onError((error) => {
   *   banner.textContent = `${error.message}. ${error.remedy}`; // "… not signed in. Run `codex login` in a terminal, …"
   * });
   * ```
   */
  get remedy(): string {
    return remedyFor(this.code, this.details);
  }

  /** The error as plain JSON, to send across a hop (a message port, a pipe, a socket). */
  toWire(): WireError {
    return this.details === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, details: this.details };
  }

  /** The PedelecError a `toWire()` answer stands for, with the same code, message and details. */
  static fromWire(error: WireError): PedelecError {
    return new PedelecError(error.code, error.message, error.details);
  }

  /** Wraps anything thrown into a PedelecError, keeping an existing code. */
  static from(error: unknown, fallbackCode: ErrorCode, fallbackMessage?: string): PedelecError {
    if (error instanceof PedelecError) return error;
    if (isWireErrorLike(error)) return new PedelecError(error.code, error.message, error.details);
    const message = error instanceof Error ? error.message : String(error);
    return new PedelecError(fallbackCode, fallbackMessage ? `${fallbackMessage}: ${message}` : message);
  }
}

function isWireErrorLike(value: unknown): value is WireError {
  if (typeof value !== "object" || value === null) return false;
  const candidate = value as { code?: unknown; message?: unknown };
  return isErrorCode(candidate.code) && typeof candidate.message === "string";
}
