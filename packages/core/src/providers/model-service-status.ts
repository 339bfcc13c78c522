import { PedelecError } from "@pedelec/protocol/pedelec-error";

/*
 * What an HTTP status from a model's service means for the turn, the same for every CLI that reports one: a refused
 * key ends the turn as PROVIDER_NOT_AUTHENTICATED (retrying cannot help), an overloaded or rate-limited service as
 * PROVIDER_OVERLOADED (the same request is likely to work later).
 */

/** 401 and 403: the service refused the credentials the CLI sent. */
export function isCredentialRefusalStatus(status: number | null | undefined): boolean {
  return status === 401 || status === 403;
}

/** 429 and every 5xx (Anthropic's 529 "overloaded" included): busy, rate-limited or failing on its side. */
export function isOverloadStatus(status: number | null | undefined): boolean {
  return typeof status === "number" && (status === 429 || (status >= 500 && status <= 599));
}

/**
 * The HTTP status a CLI quoted in an error text (`unexpected status 503 …`, `last status: 429 …`,
 * `HTTP error: 401 Unauthorized`), if any.
 */
export function quotedHttpStatus(text: string): number | null {
  const match = /\b(?:status|HTTP(?: error)?):? (\d{3})\b/i.exec(text);
  return match === null ? null : Number(match[1]);
}

/** PROVIDER_OVERLOADED, marked retriable, with what the provider said. */
export function overloadedError(message: string, details: Record<string, unknown>): PedelecError {
  return new PedelecError("PROVIDER_OVERLOADED", message, { ...details, retriable: true });
}
