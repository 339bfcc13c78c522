import { PedelecError } from "@pedelec/protocol/pedelec-error";

/**
 * The error an aborted call rejects with: the signal's reason when the app aborted with a PedelecError (so it chooses
 * the code), otherwise `fallback()`.
 */
export function abortError(signal: AbortSignal, fallback: () => PedelecError): PedelecError {
  return signal.reason instanceof PedelecError ? signal.reason : fallback();
}

/** Plain JavaScript callers can pass anything as `signal`; only an AbortSignal (or nothing) is accepted. */
export function checkSignal(signal: unknown, where: string): AbortSignal | undefined {
  if (signal === undefined) return undefined;
  const candidate = signal as Partial<AbortSignal> | null;
  if (
    typeof candidate === "object" &&
    candidate !== null &&
    typeof candidate.aborted === "boolean" &&
    typeof candidate.addEventListener === "function" &&
    typeof candidate.removeEventListener === "function"
  ) {
    return signal as AbortSignal;
  }
  throw new PedelecError("INVALID_INPUT", `${where}: signal must be an AbortSignal`);
}

/**
 * Settles like `promise`, or rejects with `onAbort()` as soon as `signal` aborts. A value that arrives after the abort
 * goes to `onAbandoned`, so whatever it holds (a session Core created meanwhile) can be released.
 */
export function untilAborted<T>(
  promise: Promise<T>,
  signal: AbortSignal | undefined,
  onAbort: () => PedelecError,
  onAbandoned?: (value: T) => void,
): Promise<T> {
  if (signal === undefined) return promise;
  return new Promise<T>((resolve, reject) => {
    let abandoned = false;
    const abort = (): void => {
      abandoned = true;
      reject(onAbort());
    };
    if (signal.aborted) abort();
    else signal.addEventListener("abort", abort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener("abort", abort);
        if (abandoned) onAbandoned?.(value);
        else resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", abort);
        reject(error);
      },
    );
  });
}
