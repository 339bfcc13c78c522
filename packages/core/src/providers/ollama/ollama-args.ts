import { OLLAMA_THINK_LEVELS } from "@pedelec/protocol/agent-wire";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import type { ProviderTurnRequest } from "../provider-adapter.js";
import { ollamaEndpointOf } from "./ollama-session-options.js";

/** Flags the adapter sets itself; an effort profile may not carry them. */
export const OLLAMA_OWNED_FLAGS = ["--workspace", "--model", "--base-url", "--conversation", "--max-tool-rounds"] as const;

/** The agent's effort knobs and the values each takes. */
const EFFORT_KNOBS: Record<string, (value: string) => boolean> = {
  "--num-ctx": (value) => /^[1-9][0-9]{2,6}$/.test(value),
  "--temperature": (value) => /^(0(\.[0-9]+)?|1(\.[0-9]+)?|2(\.0+)?)$/.test(value),
  "--think": (value) => value === "on" || value === "off" || (OLLAMA_THINK_LEVELS as readonly string[]).includes(value),
};

/**
 * An effort profile of the ollama provider holds only the agent's knobs, each with its value as the next token:
 * `--num-ctx <tokens>`, `--temperature <0–2>`, `--think on|off|low|medium|high`. Anything else is EFFORT_PROFILE_INVALID.
 */
export function checkOllamaEffortTokens(tokens: readonly string[], where: string): void {
  for (let index = 0; index < tokens.length; index += 2) {
    const flag = tokens[index]!;
    const value = tokens[index + 1];
    const valid = EFFORT_KNOBS[flag];
    if (valid === undefined) {
      throw new PedelecError("EFFORT_PROFILE_INVALID", `${where}: ${JSON.stringify(flag)} is not one of ${Object.keys(EFFORT_KNOBS).join(", ")}`);
    }
    if (value === undefined || !valid(value)) {
      throw new PedelecError("EFFORT_PROFILE_INVALID", `${where}: ${flag} needs a valid value (got ${JSON.stringify(value ?? null)})`);
    }
  }
}

/** Argv of one turn of `pedelec-agent`: `run` with the workspace, model, endpoint, conversation and effort. */
export function buildOllamaArgs(request: ProviderTurnRequest): string[] {
  if (request.model === null) throw new PedelecError("MODEL_REQUIRED", "an ollama session needs a model");
  const endpoint = ollamaEndpointOf(request.providerOptions);
  const args = ["run", "--workspace", request.workspacePath, "--model", request.model, "--base-url", endpoint.baseUrl];
  if (request.providerSessionId !== null) args.push("--conversation", request.providerSessionId);
  args.push(...request.effortArgv);
  return args;
}
