import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { isCredentialRefusalStatus, quotedHttpStatus } from "../model-service-status.js";
import { scrubProviderText } from "../provider-text-scrubber.js";

/*
 * `codex exec` does not refuse to start when it is signed out: it tries the model API, is answered 401, retries a few
 * times ("Reconnecting... 2/5 (unexpected status 401 Unauthorized: …)" error events), and ends the turn with
 * `turn.failed`; stderr logs "401 Unauthorized" too. `codex login status` says "Not logged in". Expired sign-ins ask
 * to log in again.
 */
const LOGIN_REQUIRED_PATTERNS = [
  /\b401\b[^\n]*\bunauthorized\b/i,
  /\b403\b[^\n]*\bforbidden\b/i,
  /\bnot logged in\b/i,
  /\b(?:token|session|sign-?in|login) (?:has )?expired\b/i,
  /\bplease (?:log|sign) ?in again\b/i,
];

/** True when `text` (an error event, a failed turn or stderr) is codex saying it has no valid sign-in. */
export function isCodexLoginRequiredText(text: string): boolean {
  return LOGIN_REQUIRED_PATTERNS.some((pattern) => pattern.test(text));
}

/**
 * PROVIDER_NOT_AUTHENTICATED for codex: signed out, or (a 401 / 403 quoted in `providerMessage`) the model's service
 * refused the key codex sent. `providerMessage` is codex's own text, scrubbed of endpoints and keys.
 */
export function codexNotAuthenticatedError(providerMessage: string): PedelecError {
  const text = scrubProviderText(providerMessage.trim());
  const httpStatus = quotedHttpStatus(providerMessage);
  const message = isCredentialRefusalStatus(httpStatus)
    ? `codex's model service refused its credentials (${text}); run "codex login" in a terminal, or fix the API key of its model provider`
    : `codex is not signed in (${text}); run "codex login" in a terminal`;
  return new PedelecError("PROVIDER_NOT_AUTHENTICATED", message, {
    provider: "codex",
    providerMessage: text,
    ...(httpStatus === null ? {} : { httpStatus }),
  });
}
