import { PROVIDER_NAMES, type EffortLevel, type ProviderCode } from "@pedelec/protocol/domain";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { validateEffortArgv } from "../effort-profile.js";
import type { ExplicitEffortKnob, ProviderAdapter, ProviderCapabilities, ProviderDiscovery, ProviderTurnRequest } from "./provider-adapter.js";
import { runCliTurn, type CliRunOptions, type CliTurnPlan } from "./cli-runner.js";
import { probeVersion } from "./provider-discovery.js";

/** What a CLI provider's folder supplies; `defineCliAdapter` turns it into a ProviderAdapter on the shared runner. */
export interface CliProviderDefinition<TSummary> {
  /** The provider's code; its display name is the catalogue's (PROVIDER_NAMES), so it is written once. */
  code: ProviderCode;
  /** Executable name searched for (PEDELEC_PROVIDER_PATH, the recorded path, PATH, the usual install folders). */
  programName: string;
  /** Pedelec's own program, found only in PEDELEC_HOME/bin (see ProviderAdapter.bundled). */
  bundled?: boolean;
  capabilities: ProviderCapabilities;
  /** See ProviderAdapter.nativeToolName: the CLI's name for a tool of the session's MCP server, when it registers one. */
  nativeToolName?(toolName: string): string;
  defaultEffortProfiles(): Record<EffortLevel, string[]>;
  /** See ProviderAdapter.explicitEffort: absent when the CLI has no effort setting. */
  explicitEffort?: ExplicitEffortKnob;
  /**
   * Flags the adapter sets itself (working directory, sandbox and permissions, output format, resume, prompt, model):
   * an effort profile may not carry them. Matched on the flag name before any `=`.
   */
  ownedFlags: readonly string[];
  /**
   * A token that looks like an owned flag but is this CLI's own effort knob (codex `-c model_reasoning_effort=…`);
   * `next` is the token after it, for flags whose value is separate.
   */
  isEffortKnob?(token: string, next: string | undefined): boolean;
  /** Probes the executable; defaults to `<bin> --version`. */
  discover?(executablePath: string, signal: AbortSignal, env: Record<string, string>): Promise<ProviderDiscovery>;
  /**
   * The argv, stdin, parser and outcome mapping of one turn. Throws (or rejects with) a PedelecError for input it
   * cannot express. Adapters load their stream parser here, so Core builds a provider's stream schemas on its first
   * turn rather than every provider's at start.
   */
  planTurn(request: ProviderTurnRequest): CliTurnPlan<TSummary> | Promise<CliTurnPlan<TSummary>>;
}

export function defineCliAdapter<TSummary>(definition: CliProviderDefinition<TSummary>, options: CliRunOptions = {}): ProviderAdapter {
  return {
    code: definition.code,
    displayName: PROVIDER_NAMES[definition.code],
    programName: definition.programName,
    ...(definition.bundled ? { bundled: true } : {}),
    capabilities: definition.capabilities,
    ...(definition.nativeToolName ? { nativeToolName: definition.nativeToolName } : {}),
    defaultEffortProfiles: () => definition.defaultEffortProfiles(),
    ...(definition.explicitEffort ? { explicitEffort: definition.explicitEffort } : {}),
    validateEffortArgv: (tokens, where) => validateEffortArgv(tokens, where, definition),
    discover: (executablePath, signal, env) => (definition.discover ?? probeVersion)(executablePath, signal, env),
    runTurn: async (request, onEvent) => {
      let plan: CliTurnPlan<TSummary>;
      try {
        plan = await definition.planTurn(request);
      } catch (error) {
        return { ok: false, error: PedelecError.from(error, "INVALID_INPUT") };
      }
      return runCliTurn(definition.programName, plan, request, onEvent, options);
    },
  };
}
