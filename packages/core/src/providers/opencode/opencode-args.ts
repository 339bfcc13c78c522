import type { AccessMode } from "@pedelec/protocol/domain";
import { SESSION_TOOL_SERVER_NAME } from "@pedelec/protocol/session-tool-server";
import { optionValue } from "../cli-runner.js";
import type { SessionToolServer } from "../provider-adapter.js";

/** What the argv and environment of one `opencode run` depend on. */
export interface OpencodeArgsInput {
  providerSessionId: string | null;
  model: string | null;
  effortArgv: readonly string[];
  access: AccessMode;
}

/**
 * OpenCode's permission rules for a sandbox session. `opencode run` has no command-line switch for permissions, but
 * it merges the JSON in OPENCODE_PERMISSION over every configuration file it loaded (the merge gives this value
 * precedence). File tools stay on (OpenCode keeps them to the working directory unless `external_directory` allows
 * more); there is no shell at all (the page's tools and the script runner come from the session's MCP server); the
 * web, subagents and anything outside the workspace are denied. OpenCode applies the last matching rule, and a merged
 * key keeps the position it had in the user's configuration, so there is no top-level catch-all here (it could land
 * after, and override, the rules below): every built-in tool is named.
 */
export const OPENCODE_SANDBOX_PERMISSION = {
  read: "allow",
  edit: "allow",
  glob: "allow",
  grep: "allow",
  list: "allow",
  todoread: "allow",
  todowrite: "allow",
  bash: "deny",
  external_directory: "deny",
  webfetch: "deny",
  websearch: "deny",
  codesearch: "deny",
  task: "deny",
  skill: "deny",
  doom_loop: "deny",
} as const;

/** OpenCode's name for a tool of the session's MCP server. */
export function opencodeToolName(toolName: string): string {
  return `${SESSION_TOOL_SERVER_NAME}_${toolName}`;
}

/**
 * OPENCODE_CONFIG_CONTENT of a run: the configuration the user's environment already gives there (OpenCode merges it
 * over its configuration files), with the session's MCP server added under `mcp.pedelec`. OpenCode starts the server
 * with its own environment, where the thread and its capability are; the configuration names neither. Nothing is
 * written into the workspace. `serversOff` names the user's own servers a sandbox run leaves out: each is switched
 * off (`enabled: false`, which OpenCode merges into the server's entry wherever it is defined), and so is every server
 * the inherited configuration itself defines. `null` (a Full Access run) switches nothing off.
 */
export function opencodeConfigContent(toolServer: SessionToolServer, inherited: string | undefined, serversOff: readonly string[] | null): string {
  let config: Record<string, unknown> = {};
  try {
    const parsed: unknown = inherited === undefined ? {} : JSON.parse(inherited);
    if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)) config = parsed as Record<string, unknown>;
  } catch {
    // Not JSON: OpenCode would refuse it anyway; the run gets Pedelec's part alone.
  }
  let mcp = typeof config.mcp === "object" && config.mcp !== null ? (config.mcp as Record<string, unknown>) : {};
  if (serversOff !== null) {
    const off = (entry: unknown) => ({ ...(typeof entry === "object" && entry !== null ? entry : {}), enabled: false });
    mcp = Object.fromEntries([...new Set([...Object.keys(mcp), ...serversOff])].map((name) => [name, off(mcp[name])]));
  }
  const server = { type: "local", command: [toolServer.command, ...toolServer.args], enabled: true };
  return JSON.stringify({ ...config, mcp: { ...mcp, [SESSION_TOOL_SERVER_NAME]: server } });
}

/**
 * Environment of a sandbox run: the permission rules, and no project configuration. The agent can write files into
 * its own workspace, and OpenCode would load an `opencode.json` (whose per-agent rules take precedence over the global
 * ones) or a `.opencode/` folder (plugins run as code) from there on the next turn. Newer versions read the switch
 * under its newer name first, so both names are set.
 */
export function opencodeSandboxEnv(): Record<string, string> {
  return {
    OPENCODE_PERMISSION: JSON.stringify(OPENCODE_SANDBOX_PERMISSION),
    OPENCODE_CONFIG_PROJECT_DISABLE: "1",
    OPENCODE_DISABLE_PROJECT_CONFIG: "1",
  };
}

/** Flags the adapter sets itself, or that would change permissions, the session, the prompt or the output. */
export const OPENCODE_OWNED_FLAGS = [
  "--format",
  "--session",
  "-s",
  "--continue",
  "-c",
  "--fork",
  "--model",
  "-m",
  "--agent",
  "--command",
  "--file",
  "-f",
  "--dir",
  "--attach",
  "--port",
  "--password",
  "-p",
  "--username",
  "-u",
  "--auto",
  "--yolo",
  "--dangerously-skip-permissions",
  "--interactive",
  "-i",
  "--mini",
  "--demo",
  "--share",
  "--help",
  "-h",
  "--version",
  "-v",
  "--",
];

/**
 * Argv of one turn: `run` with raw JSON events, permissions skipped only for Full Access, then resume, model and the
 * effort profile last. No positional message: `opencode run` reads the prompt from stdin, and a positional argument
 * (even `-`) would be prepended to it as text.
 */
export function buildOpencodeArgs(input: OpencodeArgsInput): string[] {
  const args = ["run", "--format", "json"];
  if (input.access === "full") args.push("--dangerously-skip-permissions");
  if (input.providerSessionId !== null) {
    args.push("--session", optionValue("opencode", "provider session id", input.providerSessionId));
  }
  if (input.model !== null && input.model !== "") {
    args.push("--model", optionValue("opencode", "model", input.model));
  }
  args.push(...input.effortArgv);
  return args;
}
