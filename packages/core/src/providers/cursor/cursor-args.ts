import type { AccessMode } from "@pedelec/protocol/domain";
import { optionValue } from "../cli-runner.js";

/** What the argv of one `cursor-agent` run depends on. */
export interface CursorArgsInput {
  workspacePath: string;
  providerSessionId: string | null;
  model: string | null;
  effortArgv: readonly string[];
  access: AccessMode;
}

/**
 * Cursor has no per-command allowlist flag for print mode, and without `--force` it only proposes file changes and
 * shell commands instead of running them, so an agent could neither edit the workspace nor call pedelec-cli. The
 * most restrictive mode that still works headless is `--force` with Cursor's own command sandbox switched on.
 */
export const CURSOR_SANDBOX_FLAGS = ["--force", "--sandbox", "enabled"] as const;
export const CURSOR_FULL_ACCESS_FLAGS = ["--force", "--sandbox", "disabled"] as const;

/** Flags the adapter sets itself; an effort profile may not carry them (`--model` only as the effort knob). */
export const CURSOR_OWNED_FLAGS = [
  "-p",
  "--print",
  "--output-format",
  "--stream-partial-output",
  "--workspace",
  "--trust",
  "-f",
  "--force",
  "--yolo",
  "--sandbox",
  "--approve-mcps",
  "--mode",
  "--plan",
  "--resume",
  "--continue",
  "--model",
  "-m",
  "--api-key",
  "-a",
  "-H",
  "--header",
  "-c",
  "--cloud",
  "--browser",
  "--list-models",
  "-h",
  "--help",
  "-v",
  "--version",
];

/**
 * Argv of one turn: print mode with the stream-json wire format and partial output (for text deltas), the workspace
 * (trusted, since nobody is there to confirm it), the access mode's flags, then resume, model and the effort
 * profile. The prompt goes on stdin.
 */
export function buildCursorArgs(input: CursorArgsInput): string[] {
  const args = ["-p", "--output-format", "stream-json", "--stream-partial-output"];
  args.push("--workspace", optionValue("cursor-agent", "workspace path", input.workspacePath), "--trust");
  args.push(...(input.access === "full" ? CURSOR_FULL_ACCESS_FLAGS : CURSOR_SANDBOX_FLAGS));
  if (input.providerSessionId !== null) {
    args.push("--resume", optionValue("cursor-agent", "chat id", input.providerSessionId));
  }
  const sessionModel = input.model !== null && input.model !== "";
  if (sessionModel) args.push("--model", optionValue("cursor-agent", "model", input.model ?? ""));
  args.push(...(sessionModel ? withoutModelChoice(input.effortArgv) : input.effortArgv));
  return args;
}

/**
 * Cursor has no effort flag, so its effort profiles choose a model. A model the session names explicitly wins over
 * the profile's choice: the profile's `--model` is left out then, and the rest of the profile kept.
 */
export function withoutModelChoice(effortArgv: readonly string[]): string[] {
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

/** `--model <name>` (or `--model=<name>`) in an effort profile is Cursor's effort knob; the name must not look like a flag. */
export function isCursorEffortKnob(token: string, next: string | undefined): boolean {
  if (token.startsWith("--model=")) return token.length > "--model=".length && !token.slice("--model=".length).startsWith("-");
  return token === "--model" && next !== undefined && next !== "" && !next.startsWith("-");
}
