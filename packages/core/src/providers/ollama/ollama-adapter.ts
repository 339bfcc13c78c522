import { AGENT_API_KEY_ENV } from "@pedelec/protocol/agent-wire";
import { PROVIDER_EXPLICIT_EFFORTS } from "@pedelec/protocol/explicit-effort";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { CORE_VERSION } from "../../core-version.js";
import { validateEffortArgv } from "../../effort-profile.js";
import { defineCliAdapter, type CliProviderDefinition } from "../cli-adapter.js";
import { exitFailure, unreadableLineFailure, type CliRunOptions } from "../cli-runner.js";
import type { ProviderAdapter, ProviderTurnOutcome } from "../provider-adapter.js";
import type { ProviderProcessResult } from "../provider-process.js";
import { buildOllamaArgs, checkOllamaEffortTokens, OLLAMA_OWNED_FLAGS } from "./ollama-args.js";
import { removeAgentConversation, sweepAgentConversations } from "./ollama-conversations.js";
import { ollamaReadinessProblem } from "./ollama-readiness.js";
import { OLLAMA_SESSION_OPTIONS, ollamaEndpointOf } from "./ollama-session-options.js";
import type { OllamaStreamSummary } from "./ollama-stream-parser.js";

/**
 * The `ollama` provider: no vendor CLI but Pedelec's own agent, `pedelec-agent`, against an Ollama-compatible endpoint.
 * Its launcher (installed in PEDELEC_HOME/bin) pins the Node.js it runs on; the key travels in its environment only.
 * The endpoint is the session's provider options (ollama-session-options.ts), from settings.json's `ollama` section
 * (ollama-settings.ts).
 */
export function createOllamaAdapter(options: CliRunOptions = {}): ProviderAdapter {
  const definition: CliProviderDefinition<OllamaStreamSummary> = {
    code: "ollama",
    programName: "pedelec-agent",
    bundled: true,
    capabilities: { textDeltas: true, resume: true },
    defaultEffortProfiles: () => ({
      low: ["--num-ctx", "4096", "--think", "off"],
      medium: ["--num-ctx", "8192"],
      high: ["--num-ctx", "32768", "--think", "on"],
    }),
    explicitEffort: { levels: PROVIDER_EXPLICIT_EFFORTS.ollama, argv: (effort) => ["--think", effort] },
    ownedFlags: OLLAMA_OWNED_FLAGS,
    // Built with this Pedelec: its version is Core's, and asking the launcher would only cost a process.
    discover: async (executablePath) => ({ available: true, executablePath, version: CORE_VERSION, error: null }),
    planTurn: async (request) => {
      const endpoint = ollamaEndpointOf(request.providerOptions);
      const { OllamaStreamParser } = await import("./ollama-stream-parser.js");
      return {
        args: buildOllamaArgs(request),
        stdin: request.prompt,
        env: { [AGENT_API_KEY_ENV]: endpoint.apiKey },
        parser: new OllamaStreamParser(),
        outcome: ollamaTurnOutcome,
      };
    },
  };
  const adapter = defineCliAdapter(definition, options);
  return {
    ...adapter,
    // pedelec-agent's conversations (PEDELEC_HOME/agent/conversations): they go with their session.
    storedConversations: { remove: removeAgentConversation, sweep: sweepAgentConversations },
    sessionOptions: OLLAMA_SESSION_OPTIONS,
    readinessProblem: ollamaReadinessProblem,
    validateEffortArgv: (tokens, where) => {
      const frozen = validateEffortArgv(tokens, where, definition);
      checkOllamaEffortTokens(frozen, where);
      return frozen;
    },
  };
}

/** How a finished run of the agent ended: its own coded failure, or a crash or unreadable output. */
export function ollamaTurnOutcome(run: ProviderProcessResult, summary: OllamaStreamSummary): ProviderTurnOutcome {
  if (summary.failure !== null) {
    const error = PedelecError.fromWire(summary.failure.error);
    return summary.failure.conversationLost ? { ok: false, error, conversationLost: true } : { ok: false, error };
  }
  if (run.exitCode !== 0) return { ok: false, error: exitFailure("pedelec-agent", run, "") };
  if (summary.problem !== null) return { ok: false, error: unreadableLineFailure("pedelec-agent", summary.problem, summary.invalidLineCount) };
  if (!summary.completed) {
    return {
      ok: false,
      error: new PedelecError("PROVIDER_OUTPUT_INVALID", "pedelec-agent ended without finishing its turn", { stderr: run.stderr }),
    };
  }
  return { ok: true };
}
