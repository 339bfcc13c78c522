import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { isCredentialRefusalStatus } from "../model-service-status.js";
import { scrubProviderText } from "../provider-text-scrubber.js";

/*
 * Claude Code does not fail a print-mode run when it is signed out: it answers with a synthetic assistant
 * message (model "<synthetic>") and an error result whose text asks the user to log in. The wording changed
 * between versions, so several phrasings are recognised.
 */
const LOGIN_REQUIRED_PATTERNS = [/\brun \/login\b/i, /\bnot logged in\b/i, /\blogin expired\b/i, /\binvalid api key\b/i];

/** Usage-limit banners can mention /login (to switch accounts) without the user being signed out. */
const USAGE_LIMIT_PATTERN = /\busage limit\b|\blimit reached\b|\bhit your limit\b/i;

export const CLAUDE_SYNTHETIC_MODEL = "<synthetic>";

/** True when `text` is Claude Code telling the user to sign in. */
export function isClaudeLoginRequiredText(text: string): boolean {
  if (USAGE_LIMIT_PATTERN.test(text)) return false;
  return LOGIN_REQUIRED_PATTERNS.some((pattern) => pattern.test(text));
}

/**
 * PROVIDER_NOT_AUTHENTICATED for claude: signed out, or (with `httpStatus` 401 / 403) the model's service refused the
 * key or token claude sent. `providerMessage` is Claude Code's own text, scrubbed of endpoints and keys.
 */
export function claudeNotAuthenticatedError(providerMessage: string, httpStatus: number | null): PedelecError {
  const text = scrubProviderText(providerMessage.trim());
  const message = isCredentialRefusalStatus(httpStatus)
    ? `claude's model service refused its credentials (${text}); run "claude auth login" in a terminal, or fix the API key or token claude is given`
    : `claude is not signed in (${text}); run "claude auth login" in a terminal`;
  return new PedelecError("PROVIDER_NOT_AUTHENTICATED", message, {
    provider: "claude",
    providerMessage: text,
    ...(httpStatus === null ? {} : { httpStatus }),
  });
}
