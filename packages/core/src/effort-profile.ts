import { PedelecError } from "@pedelec/protocol/pedelec-error";

/**
 * Flags an effort profile may not carry: they would move the working directory, widen permissions, pick another
 * conversation, or change the output format Core parses. Matched on the flag name before any `=`.
 */
const FORBIDDEN_FLAGS = new Set([
  "-C", "--cd", "--cwd", "--dir", "--workspace", "--add-dir", "--directory",
  "-s", "--sandbox", "--permission-mode", "--dangerously-skip-permissions", "--dangerously-bypass-approvals-and-sandbox",
  "--yolo", "--force", "-f", "--full-auto", "--allowedTools", "--allowed-tools", "--disallowedTools", "--mcp-config",
  "--resume", "--continue", "-c", "--session", "--session-id", "--conversation",
  "--output-format", "--input-format", "--format", "-p", "--print", "--model", "-m",
]);

const SHELL_CHARACTERS = /[;&|`$<>\n\r\0]/;

/** Validates an effort profile's argv tokens; returns a frozen copy to snapshot into a session. */
export function validateEffortArgv(tokens: readonly string[], where: string): readonly string[] {
  if (tokens.length > 32) throw new PedelecError("EFFORT_PROFILE_INVALID", `${where}: at most 32 tokens`);
  for (const token of tokens) {
    if (typeof token !== "string" || token.length === 0 || token.length > 200) {
      throw new PedelecError("EFFORT_PROFILE_INVALID", `${where}: every token must be a non-empty string of at most 200 characters`);
    }
    if (SHELL_CHARACTERS.test(token)) {
      throw new PedelecError("EFFORT_PROFILE_INVALID", `${where}: token ${JSON.stringify(token)} contains shell syntax; profiles are argv, not shell`);
    }
    const flag = token.split("=", 1)[0] ?? token;
    if (token.startsWith("-") && FORBIDDEN_FLAGS.has(flag)) {
      throw new PedelecError("EFFORT_PROFILE_INVALID", `${where}: flag ${flag} is managed by Pedelec and cannot be set in an effort profile`);
    }
  }
  return Object.freeze([...tokens]);
}
