/**
 * Pedelec's MCP server of one session: the name every CLI adapter registers it under (so Claude Code shows the page's
 * `add_todo` as `mcp__pedelec__add_todo`, OpenCode as `pedelec_add_todo`), and the `pedelec-cli` word that serves it
 * on stdio. The server reads the session's thread id and capability from the environment, never from argv.
 */
export const SESSION_TOOL_SERVER_NAME = "pedelec";
export const SESSION_TOOL_SERVER_COMMAND = "mcp";
/** The server's script runner: `pedelec-ts-runtime run` as a tool, for agents that have no shell in a sandbox session. */
export const SESSION_SCRIPT_TOOL = "run_script";
