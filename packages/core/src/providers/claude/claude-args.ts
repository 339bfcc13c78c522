import type { AccessMode } from "@pedelec/protocol/domain";
import { SESSION_TOOL_SERVER_NAME } from "@pedelec/protocol/session-tool-server";
import { optionValue } from "../cli-runner.js";
import type { SessionToolServer } from "../provider-adapter.js";

/** What the argv of one `claude` run depends on. */
export interface ClaudeArgsInput {
  providerSessionId: string | null;
  model: string | null;
  effortArgv: readonly string[];
  access: AccessMode;
  toolServer: SessionToolServer;
}

/**
 * Claude Code's built-in tools in a sandbox session, the only ones it is given (`--tools`): reading and editing files,
 * which it keeps to the working directory. No shell at all, no web, no subagents: the page's tools and Pedelec's
 * script runner come from the session's MCP server instead.
 */
export const CLAUDE_SANDBOX_TOOLS = ["Read", "Edit", "Write", "Glob", "Grep", "TodoWrite"];

/** Claude Code's name for a tool of the session's MCP server. */
export function claudeToolName(toolName: string): string {
  return `mcp__${SESSION_TOOL_SERVER_NAME}__${toolName}`;
}

/**
 * The `--mcp-config` value registering the session's MCP server. Claude Code starts it with its own environment,
 * where the thread and its capability are; the configuration names neither.
 */
export function claudeMcpConfig(toolServer: SessionToolServer): string {
  const server = { type: "stdio", command: toolServer.command, args: [...toolServer.args] };
  return JSON.stringify({ mcpServers: { [SESSION_TOOL_SERVER_NAME]: server } });
}

/**
 * Environment of a sandbox run. Claude Code defers MCP tools behind its ToolSearch tool by default (the model sees
 * only their names in a reminder); with only Pedelec's server loaded, its tools are listed to the model directly.
 */
export const CLAUDE_SANDBOX_ENV = { ENABLE_TOOL_SEARCH: "false" };

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
 * deltas, the session's MCP server, the access mode's permissions, then resume, model and the effort profile. The
 * prompt goes on stdin. A sandbox session loads Pedelec's MCP server only (not the user's), and allows its tools and
 * the file tools; Full Access keeps the user's own servers and skips permissions.
 */
export function buildClaudeArgs(input: ClaudeArgsInput): string[] {
  const args = ["-p", "--output-format", "stream-json", "--verbose", "--include-partial-messages"];
  args.push("--mcp-config", claudeMcpConfig(input.toolServer));
  if (input.access === "full") args.push("--dangerously-skip-permissions");
  else {
    const allowed = [...CLAUDE_SANDBOX_TOOLS, `mcp__${SESSION_TOOL_SERVER_NAME}`];
    args.push(
      "--strict-mcp-config",
      "--tools",
      CLAUDE_SANDBOX_TOOLS.join(","),
      "--permission-mode",
      "acceptEdits",
      "--allowedTools",
      allowed.join(","),
    );
  }
  if (input.providerSessionId !== null) {
    args.push("--resume", optionValue("claude", "provider session id", input.providerSessionId));
  }
  if (input.model !== null && input.model !== "") {
    args.push("--model", optionValue("claude", "model", input.model));
  }
  args.push(...input.effortArgv);
  return args;
}
