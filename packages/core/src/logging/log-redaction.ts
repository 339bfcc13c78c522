/**
 * Field names whose values a log line never shows unless `logging.debug` is on: what a page or an agent sent (tool
 * arguments and results, prompts, chat text, files, script code and output) and secrets (API keys, the control panel's
 * secret, attestation keys, thread capabilities, asset tickets). A log call that must carry such a value uses one of
 * these names, at the top level of its fields or one level down (`{ request: { args } }`).
 */
export const REDACTED_FIELD_NAMES = [
  // Content
  "args",
  "arguments",
  "toolArgs",
  "result",
  "toolResult",
  "prompt",
  "guidance",
  "text",
  "delta",
  "content",
  "payload",
  "body",
  "input",
  "output",
  "line",
  "stdout",
  "stderr",
  "source",
  // Secrets
  "apiKey",
  "secret",
  "controlPanelSecret",
  "controlPanelUrl",
  "attestationKey",
  "privateKey",
  "capability",
  "threadCapability",
  "token",
  "ticket",
  "password",
  "authorization",
  "cookie",
  "headers",
  "env",
] as const;

/** What a redacted value is written as. */
export const REDACTION_CENSOR = "[redacted]";

/** The same names as pino redaction paths: each at the top level and one level down. */
export const REDACTED_PATHS: readonly string[] = REDACTED_FIELD_NAMES.flatMap((name) => [name, `*.${name}`]);

const redactedNames: ReadonlySet<string> = new Set(REDACTED_FIELD_NAMES);

/**
 * `fields` with REDACTED_PATHS censored as pino does it, for lines written without pino (before it is loaded, at a
 * sudden exit). The input is not changed.
 */
export function redactFields(fields: Record<string, unknown>): Record<string, unknown> {
  const copy: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(fields)) {
    if (redactedNames.has(name)) copy[name] = REDACTION_CENSOR;
    else if (isPlainRecord(value)) copy[name] = redactTopLevel(value);
    else copy[name] = value;
  }
  return copy;
}

function redactTopLevel(value: Record<string, unknown>): Record<string, unknown> {
  if (!Object.keys(value).some((name) => redactedNames.has(name))) return value;
  const copy: Record<string, unknown> = { ...value };
  for (const name of Object.keys(copy)) if (redactedNames.has(name)) copy[name] = REDACTION_CENSOR;
  return copy;
}

function isPlainRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
