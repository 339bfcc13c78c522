import type { AccessMode } from "@pedelec/protocol/domain";
import { optionValue } from "../cli-runner.js";

/** What the argv of one `codex exec` run depends on. */
export interface CodexArgsInput {
  workspacePath: string;
  providerSessionId: string | null;
  model: string | null;
  effortArgv: readonly string[];
  access: AccessMode;
}

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
 * Argv of one turn: `exec` with the JSONL event stream, the workspace, the access mode's flags, model and effort
 * profile, then `resume <id>` for a continued conversation, and `-` so the prompt is read from stdin. Options that
 * are not global to `codex exec` (`--cd`, `--sandbox`) must come before the `resume` subcommand.
 */
export function buildCodexArgs(input: CodexArgsInput): string[] {
  const args = ["exec", "--json", "--skip-git-repo-check", "--cd", optionValue("codex", "workspace path", input.workspacePath)];
  args.push(...(input.access === "full" ? CODEX_FULL_ACCESS_FLAGS : CODEX_SANDBOX_FLAGS), ...CODEX_SHELL_FLAGS);
  if (input.model !== null && input.model !== "") args.push("-m", optionValue("codex", "model", input.model));
  args.push(...input.effortArgv);
  if (input.providerSessionId !== null) args.push("resume", optionValue("codex", "provider session id", input.providerSessionId));
  args.push("-");
  return args;
}
