import { PedelecError } from "@pedelec/protocol/pedelec-error";

/** What the argv of one `claude` run depends on. */
export interface ClaudeArgsInput {
  providerSessionId: string | null;
  model: string | null;
  effortArgv: readonly string[];
}

/**
 * Argv of one turn: print mode with the stream-json wire format (which requires --verbose), partial
 * messages for text deltas, no permission prompts (nobody could answer them), then resume, model and
 * the effort profile. The prompt goes on stdin, never in argv.
 */
export function buildClaudeArgs(input: ClaudeArgsInput): string[] {
  const args = [
    "-p",
    "--output-format",
    "stream-json",
    "--verbose",
    "--include-partial-messages",
    "--dangerously-skip-permissions",
  ];
  if (input.providerSessionId !== null) {
    args.push("--resume", optionValue("provider session id", input.providerSessionId));
  }
  if (input.model !== null && input.model !== "") {
    args.push("--model", optionValue("model", input.model));
  }
  args.push(...input.effortArgv);
  return args;
}

/** A value that looks like a flag would be read as one by the CLI's option parser. */
function optionValue(name: string, value: string): string {
  if (value === "" || value.startsWith("-")) {
    throw new PedelecError("INVALID_INPUT", `claude ${name} must not be empty or start with "-"`, { value });
  }
  return value;
}
