import type { AccessMode } from "@pedelec/protocol/domain";
import { optionValue } from "../cli-runner.js";
import { PedelecError } from "@pedelec/protocol/pedelec-error";

/** What the argv of one `agy` run depends on. */
export interface AntigravityArgsInput {
  prompt: string;
  providerSessionId: string | null;
  model: string | null;
  effortArgv: readonly string[];
  access: AccessMode;
}

/**
 * The Antigravity CLI has no headless mode that allows some shell commands and refuses others: without
 * --dangerously-skip-permissions every command waits for an approval nobody can give in print mode and is denied,
 * Pedelec's own `pedelec-cli` included. A sandbox session therefore runs with the same flags as a Full Access one;
 * the access mode is shown to the user, not enforced by this CLI.
 */
export const ANTIGRAVITY_PERMISSION_FLAGS: Record<AccessMode, readonly string[]> = {
  sandbox: ["--mode", "accept-edits", "--dangerously-skip-permissions"],
  full: ["--mode", "accept-edits", "--dangerously-skip-permissions"],
};

/** Flags the adapter sets itself; an effort profile may not carry them (`--model` only as the effort knob). */
export const ANTIGRAVITY_OWNED_FLAGS = [
  "-p",
  "--print",
  "--prompt",
  "--output-format",
  "--input-format",
  "--json-schema",
  "--mode",
  "--dangerously-skip-permissions",
  "--sandbox",
  "--add-dir",
  "--conversation",
  "--continue",
  "-c",
  "--resume",
  "-r",
  "--model",
  "-m",
];

/**
 * An effort profile chooses a model (the CLI has no effort flag; model ids carry their effort, e.g. `…-flash-high`):
 * `--model <id>` or `--model=<id>` is the one owned flag a profile may carry.
 */
export function isAntigravityEffortKnob(token: string, next: string | undefined): boolean {
  if (token.startsWith("--model=")) return token.length > "--model=".length && !token.startsWith("--model=-");
  return token === "--model" && next !== undefined && next !== "" && !next.startsWith("-");
}

/**
 * Argv of one turn: the prompt as the one argv element after `-p` (the CLI reads it there, never from stdin), the
 * stream-json wire format, permissions, then the conversation to resume, the model and the effort profile.
 * A session model wins over the profile's model choice, so only one `--model` ever reaches the CLI.
 */
export function buildAntigravityArgs(input: AntigravityArgsInput): string[] {
  if (input.prompt === "") throw new PedelecError("INVALID_INPUT", "agy needs a non-empty prompt");
  const args: string[] = [];
  if (input.providerSessionId !== null) {
    args.push("--conversation", optionValue("agy", "conversation id", input.providerSessionId));
  }
  args.push("-p", input.prompt, "--output-format", "stream-json", ...ANTIGRAVITY_PERMISSION_FLAGS[input.access]);
  const sessionModel = input.model !== null && input.model !== "" ? optionValue("agy", "model", input.model) : null;
  if (sessionModel !== null) args.push("--model", sessionModel);
  args.push(...(sessionModel === null ? input.effortArgv : withoutModelChoice(input.effortArgv)));
  return args;
}

/** The effort profile without its `--model` choice (for a session whose own model takes precedence). */
function withoutModelChoice(effortArgv: readonly string[]): string[] {
  const kept: string[] = [];
  for (let index = 0; index < effortArgv.length; index += 1) {
    const token = effortArgv[index] ?? "";
    if (token.startsWith("--model=")) continue;
    if (token === "--model") {
      index += 1;
      continue;
    }
    kept.push(token);
  }
  return kept;
}
