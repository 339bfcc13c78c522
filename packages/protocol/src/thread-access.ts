/**
 * What an agent-facing command (`pedelec-cli`, `pedelec-ts-runtime`, `pedelec-agent`) presents to Core: the thread id,
 * which is the session id, and the secret capability Core gave only to that session's provider processes. Plain
 * patterns, so a command that starts once per tool call can check them without loading the schema library; the
 * schemas in domain.ts and requests.ts are built from the same patterns.
 */

/** Session ids double as thread ids (workspace folder names, `--thread-id`), so they are path-safe. */
export const SESSION_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{7,127}$/;
export const SESSION_ID_RULE = "must be 8–128 letters, digits, '_' or '-'";

/** The environment variable that carries the thread capability to the agent and everything it starts. */
export const THREAD_CAPABILITY_ENV = "PEDELEC_THREAD_CAPABILITY";
export const THREAD_CAPABILITY_PATTERN = /^[A-Za-z0-9_-]{16,256}$/;
export const THREAD_CAPABILITY_RULE = "must be the thread capability Core issued";

export function isSessionId(value: unknown): value is string {
  return typeof value === "string" && SESSION_ID_PATTERN.test(value);
}

export function isThreadCapability(value: unknown): value is string {
  return typeof value === "string" && THREAD_CAPABILITY_PATTERN.test(value);
}
