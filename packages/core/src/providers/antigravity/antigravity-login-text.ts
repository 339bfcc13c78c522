/*
 * A headless `agy` run without a signed-in account (sign-in happens in the first interactive run, tokens live in
 * the OS keyring) exits non-zero with "authentication required" instead of prompting. Related phrasings are
 * recognised too, since the wording is not a documented contract.
 */
const LOGIN_REQUIRED_PATTERNS = [
  /\bauthentication required\b/i,
  /\bnot (?:signed|logged) in\b/i,
  /\bplease (?:sign|log) ?in\b/i,
  /\blogin required\b/i,
  /\bunauthenticated\b/i,
];

/** True when `text` is the Antigravity CLI saying that nobody is signed in. */
export function isAntigravityLoginRequiredText(text: string): boolean {
  return LOGIN_REQUIRED_PATTERNS.some((pattern) => pattern.test(text));
}

/** The first line of `text` that asks for a sign-in, or null. */
export function antigravityLoginLine(text: string): string | null {
  return (
    text
      .split(/\r?\n/)
      .find((line) => isAntigravityLoginRequiredText(line))
      ?.trim() ?? null
  );
}
