import type { AccessMode } from "@pedelec/protocol/domain";
import { optionValue } from "../cli-runner.js";

/** What the argv of one `claude` run depends on. */
export interface ClaudeArgsInput {
  providerSessionId: string | null;
  model: string | null;
  effortArgv: readonly string[];
  access: AccessMode;
}

/**
 * In a sandbox session the agent may read and edit files (Claude Code keeps its file tools to the working directory)
 * and run Pedelec's agent commands through Bash. Claude Code itself also lets read-only commands run (`echo`, `cat` of a
 * file in the workspace; the real 2.1.332 did), and refuses everything that changes files outside the rules, or reads
 * outside the workspace, since nobody is there to approve it in print mode.
 */
export const CLAUDE_SANDBOX_TOOLS = [
  "Read",
  "Edit",
  "Write",
  "Glob",
  "Grep",
  "TodoWrite",
  "Bash(pedelec-cli:*)",
  "Bash(pedelec-ts-runtime:*)",
  "Bash(pedelec-deno:*)",
];

/** Flags the adapter sets itself; an effort profile may not carry them. */
export const CLAUDE_OWNED_FLAGS = [
  "-p",
  "--print",
  "--output-format",
  "--input-format",
  "--verbose",
  "--include-partial-messages",
  "--dangerously-skip-permissions",
  "--allow-dangerously-skip-permissions",
  "--permission-mode",
  "--permission-prompt-tool",
  "--allowedTools",
  "--allowed-tools",
  "--disallowedTools",
  "--disallowed-tools",
  "--tools",
  "--add-dir",
  "--mcp-config",
  "--strict-mcp-config",
  "--settings",
  "--setting-sources",
  "--resume",
  "-r",
  "--continue",
  "-c",
  "--session-id",
  "--fork-session",
  "--model",
  "--fallback-model",
  "--system-prompt",
  "--append-system-prompt",
  "--plugin-dir",
  "--agents",
  "--ide",
];

/**
 * Argv of one turn: print mode with the stream-json wire format (which requires --verbose), partial messages for text
 * deltas, the access mode's permissions, then resume, model and the effort profile. The prompt goes on stdin.
 */
export function buildClaudeArgs(input: ClaudeArgsInput): string[] {
  const args = ["-p", "--output-format", "stream-json", "--verbose", "--include-partial-messages"];
  if (input.access === "full") args.push("--dangerously-skip-permissions");
  else args.push("--permission-mode", "acceptEdits", "--allowedTools", CLAUDE_SANDBOX_TOOLS.join(","));
  if (input.providerSessionId !== null) {
    args.push("--resume", optionValue("claude", "provider session id", input.providerSessionId));
  }
  if (input.model !== null && input.model !== "") {
    args.push("--model", optionValue("claude", "model", input.model));
  }
  args.push(...input.effortArgv);
  return args;
}
