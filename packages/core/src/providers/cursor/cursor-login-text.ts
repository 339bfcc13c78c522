/*
 * A signed-out cursor-agent exits non-zero with a message on stderr that asks for a login or an API key
 * ("Not authenticated", "Authentication required … run `cursor-agent login` … or set CURSOR_API_KEY"). The wording
 * varies between versions, so several phrasings are recognised.
 */
const LOGIN_REQUIRED_PATTERNS = [
  /\bnot authenticated\b/i,
  /\bauthentication required\b/i,
  /\b(?:cursor-agent|agent) login\b/i,
  /\bnot logged in\b/i,
  /\binvalid api key\b/i,
];

/** True when `text` is cursor-agent telling the user to sign in. */
export function isCursorLoginRequiredText(text: string): boolean {
  return LOGIN_REQUIRED_PATTERNS.some((pattern) => pattern.test(text));
}

/** The command that signs cursor-agent in. */
export const CURSOR_LOGIN_COMMAND = "cursor-agent login";
