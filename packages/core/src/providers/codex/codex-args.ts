import type { AccessMode } from "@pedelec/protocol/domain";
import { SESSION_TOOL_SERVER_NAME } from "@pedelec/protocol/session-tool-server";
import { optionValue } from "../cli-runner.js";
import type { SessionToolServer } from "../provider-adapter.js";
import { codexServersOffFlags } from "./codex-user-servers.js";

/** What the argv of one `codex exec` run depends on. */
export interface CodexArgsInput {
  workspacePath: string;
  providerSessionId: string | null;
  model: string | null;
  effortArgv: readonly string[];
  access: AccessMode;
  toolServer: SessionToolServer;
  /** The user's own MCP servers to switch off for this turn (a sandbox session's: see codexUserMcpServers). */
  serversOff: readonly string[];
}

/**
 * How codex shows a tool of the session's MCP server to the model: the function `<name>` in the tool namespace
 * `mcp__pedelec` (a flat `mcp__pedelec__<name>` is not a tool codex knows). codex 0.169 defers MCP namespaces behind its
 * tool_search tool, naming them in the request's instructions; a call of the function in the namespace works directly.
 */
export function codexToolName(toolName: string): string {
  return `${toolName} (in the tool namespace mcp__${SESSION_TOOL_SERVER_NAME})`;
}

/**
 * `-c` overrides registering the session's MCP server under `mcp_servers.pedelec`. codex gives an MCP server only the
 * environment variables its `env_vars` lists (besides HOME, PATH and TMPDIR), so the thread's variables are named
 * there; their values stay in the environment. `codex exec` refuses MCP calls under its "never" approval policy
 * unless the server's tools are approved, and `required` makes codex wait for the server's tool list before its first
 * request (without it, a server slower than about 0.7 s misses the first request). Values are TOML, which reads JSON
 * strings and arrays of them as they are.
 */
export function codexMcpFlags(toolServer: SessionToolServer): string[] {
  const key = `mcp_servers.${SESSION_TOOL_SERVER_NAME}`;
  return [
    ["command", JSON.stringify(toolServer.command)],
    ["args", JSON.stringify(toolServer.args)],
    ["env_vars", JSON.stringify(toolServer.envNames)],
    ["default_tools_approval_mode", '"approve"'],
    ["required", "true"],
  ].flatMap(([name, value]) => ["-c", `${key}.${name}=${value}`]);
}

/**
 * A sandbox session has no shell: `features.shell_tool=false` takes codex's command tools (`exec_command`,
 * `write_stdin`) out of the request, so page tools and scripts go through the session's MCP server only. File edits
 * (`apply_patch`) stay, inside the sandbox.
 */
export const CODEX_NO_SHELL_FLAGS = ["-c", "features.shell_tool=false"];

/**
 * Sandbox: codex's own OS sandbox (Seatbelt on macOS, bubblewrap/Landlock + seccomp on Linux) with writes limited to
 * the workspace. Its network rule is needed off: with network disabled the Linux seccomp filter refuses every
 * `connect` (unix sockets included) and Seatbelt denies outbound unix sockets, so `pedelec-cli` could not reach
 * Core's socket. `codex exec` never asks for approvals (it runs with approval policy "never").
 */
export const CODEX_SANDBOX_FLAGS = ["--sandbox", "workspace-write", "-c", "sandbox_workspace_write.network_access=true"];

/**
 * codex runs the model's commands as login shells (`bash -lc`) by default, and a login shell's profile may set PATH
 * anew (Debian's /etc/profile does), losing the folder with `pedelec-cli` that Core put first. Plain shells keep the
 * PATH Core built, which already holds the directories the user's login shell adds.
 */
export const CODEX_SHELL_FLAGS = ["-c", "allow_login_shell=false"];

/** Full Access: no sandbox and no approvals. */
export const CODEX_FULL_ACCESS_FLAGS = ["--dangerously-bypass-approvals-and-sandbox"];

/** Flags the adapter sets itself, or that reach what it controls; an effort profile may not carry them. */
export const CODEX_OWNED_FLAGS = [
  "--json",
  "--experimental-json",
  "-C",
  "--cd",
  "--add-dir",
  "-s",
  "--sandbox",
  "--dangerously-bypass-approvals-and-sandbox",
  "--yolo",
  "--full-auto",
  "--not-so-yolo",
  "-c",
  "--config",
  "-p",
  "--profile",
  "--ignore-user-config",
  "--ignore-rules",
  "-m",
  "--model",
  "--oss",
  "--local-provider",
  "--skip-git-repo-check",
  "--ephemeral",
  "-o",
  "--output-last-message",
  "--output-schema",
  "--color",
  "-i",
  "--image",
  "--last",
  "--all",
];

/** The one config key an effort profile may override, and the values codex accepts for it. */
const EFFORT_KEY = "model_reasoning_effort";
const EFFORT_VALUES = ["minimal", "low", "medium", "high", "xhigh"];

/**
 * `-c model_reasoning_effort=<level>` (also `--config`, `--config=…` and `-c…` attached) is codex's effort knob;
 * every other config override can reach the sandbox, approvals, the model provider or the working directory.
 */
export function isCodexEffortKnob(token: string, next: string | undefined): boolean {
  let assignment: string | undefined;
  if (token === "-c" || token === "--config") assignment = next;
  else if (token.startsWith("--config=")) assignment = token.slice("--config=".length);
  else if (token.startsWith("-c") && !token.startsWith("--")) assignment = token.slice(2).replace(/^=/, "");
  if (assignment === undefined) return false;
  const separator = assignment.indexOf("=");
  if (separator === -1 || assignment.slice(0, separator).trim() !== EFFORT_KEY) return false;
  const value = assignment
    .slice(separator + 1)
    .trim()
    .replace(/^(["'])(.*)\1$/, "$2");
  return EFFORT_VALUES.includes(value);
}

/**
 * Argv of one turn: `exec` with the JSONL event stream, the workspace, the access mode's flags, the user's MCP servers
 * switched off for a sandbox session, the session's MCP server, model and effort profile, then `resume <id>` for a continued conversation, and `-` so the prompt is read from stdin. Options that
 * are not global to `codex exec` (`--cd`, `--sandbox`) must come before the `resume` subcommand.
 */
export function buildCodexArgs(input: CodexArgsInput): string[] {
  const args = ["exec", "--json", "--skip-git-repo-check", "--cd", optionValue("codex", "workspace path", input.workspacePath)];
  args.push(...(input.access === "full" ? CODEX_FULL_ACCESS_FLAGS : [...CODEX_SANDBOX_FLAGS, ...CODEX_NO_SHELL_FLAGS]), ...CODEX_SHELL_FLAGS);
  args.push(...codexServersOffFlags(input.serversOff), ...codexMcpFlags(input.toolServer));
  if (input.model !== null && input.model !== "") args.push("-m", optionValue("codex", "model", input.model));
  args.push(...input.effortArgv);
  if (input.providerSessionId !== null) args.push("resume", optionValue("codex", "provider session id", input.providerSessionId));
  args.push("-");
  return args;
}
