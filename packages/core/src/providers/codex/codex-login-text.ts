/*
 * `codex exec` does not refuse to start when it is signed out: it tries the model API, is answered 401, retries a few
 * times ("Reconnecting... 2/5 (unexpected status 401 Unauthorized: …)" error events), and ends the turn with
 * `turn.failed`; stderr logs "401 Unauthorized" too. `codex login status` says "Not logged in". Expired sign-ins ask
 * to log in again.
 */
const LOGIN_REQUIRED_PATTERNS = [
  /\b401\b[^\n]*\bunauthorized\b/i,
  /\bnot logged in\b/i,
  /\b(?:token|session|sign-?in|login) (?:has )?expired\b/i,
  /\bplease (?:log|sign) ?in again\b/i,
];

/** True when `text` (an error event, a failed turn or stderr) is codex saying it has no valid sign-in. */
export function isCodexLoginRequiredText(text: string): boolean {
  return LOGIN_REQUIRED_PATTERNS.some((pattern) => pattern.test(text));
}
