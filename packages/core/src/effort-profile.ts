import { PedelecError } from "@pedelec/protocol/pedelec-error";

const SHELL_CHARACTERS = /[;&|`$<>\n\r\0]/;

/** What a provider says about the flags of its own CLI. */
export interface EffortFlagRules {
  /** Flags the provider's adapter sets itself; an effort profile may not carry them (matched before any `=`). */
  ownedFlags: readonly string[];
  /** A token that looks owned but is the CLI's own effort knob (`next`: the token after it). */
  isEffortKnob?(token: string, next: string | undefined): boolean;
}

/**
 * Validates an effort profile's argv tokens against one provider's rules; returns a frozen copy to snapshot into a
 * session. Profiles are argv, never shell, and never touch what the adapter controls: the working directory,
 * sandbox and permission flags, the output format, resume, the prompt and the model.
 */
export function validateEffortArgv(tokens: readonly string[], where: string, rules: EffortFlagRules): readonly string[] {
  if (tokens.length > 32) throw new PedelecError("EFFORT_PROFILE_INVALID", `${where}: at most 32 tokens`);
  const owned = new Set(rules.ownedFlags);
  for (const [index, token] of tokens.entries()) {
    if (typeof token !== "string" || token.length === 0 || token.length > 200) {
      throw new PedelecError("EFFORT_PROFILE_INVALID", `${where}: every token must be a non-empty string of at most 200 characters`);
    }
    if (SHELL_CHARACTERS.test(token)) {
      throw new PedelecError(
        "EFFORT_PROFILE_INVALID",
        `${where}: token ${JSON.stringify(token)} contains shell syntax; profiles are argv, not shell`,
      );
    }
    const flag = ownedFlagOf(token, owned);
    if (flag === null) continue;
    if (rules.isEffortKnob?.(token, tokens[index + 1])) continue;
    throw new PedelecError("EFFORT_PROFILE_INVALID", `${where}: flag ${flag} is managed by Pedelec and cannot be set in an effort profile`);
  }
  return Object.freeze([...tokens]);
}

/**
 * The owned flag a token sets, or null. Matched on the name before any `=`, and for a single-dash token also on its
 * first letter: option parsers read `-sdanger-full-access` as `-s danger-full-access`.
 */
function ownedFlagOf(token: string, owned: ReadonlySet<string>): string | null {
  if (!token.startsWith("-")) return null;
  const flag = token.split("=", 1)[0] ?? token;
  if (owned.has(flag)) return flag;
  const short = token.slice(0, 2);
  if (!token.startsWith("--") && token.length > 2 && owned.has(short)) return short;
  return null;
}
