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
