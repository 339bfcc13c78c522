import { PedelecError } from "@pedelec/protocol/pedelec-error";
import type { ProviderAdapter, ProviderTurnOutcome } from "../provider-adapter.js";
import { defineCliAdapter } from "../cli-adapter.js";
import { exitFailure, unreadableLineFailure } from "../cli-runner.js";
import type { ProviderProcessResult } from "../provider-process.js";
import { ANTIGRAVITY_OWNED_FLAGS, buildAntigravityArgs, isAntigravityEffortKnob } from "./antigravity-args.js";
import { antigravityLoginLine } from "./antigravity-login-text.js";
import type { AntigravityStreamSummary } from "./antigravity-stream-parser.js";

export interface AntigravityAdapterOptions {
  /** Time between SIGTERM and SIGKILL of the process group on cancel (default 2 s). */
  killGraceMs?: number;
}

/**
 * Default effort profiles. The CLI has no effort flag; its model ids carry their effort (`agy models` lists them),
 * so each level is a model choice. A session's own model takes precedence over the profile's.
 */
export const ANTIGRAVITY_DEFAULT_EFFORT_PROFILES = {
  low: ["--model", "gemini-3.6-flash-low"],
  medium: ["--model", "gemini-3.6-flash-medium"],
  high: ["--model", "gemini-3.1-pro-high"],
};

/** The Antigravity CLI (`agy`): print mode, stream-json on stdout, the prompt as the argv element after `-p`. */
export function createAntigravityAdapter(options: AntigravityAdapterOptions = {}): ProviderAdapter {
  return defineCliAdapter(
    {
      code: "antigravity",
      programName: "agy",
      capabilities: { textDeltas: true, resume: true },
      defaultEffortProfiles: () => ({
        low: [...ANTIGRAVITY_DEFAULT_EFFORT_PROFILES.low],
        medium: [...ANTIGRAVITY_DEFAULT_EFFORT_PROFILES.medium],
        high: [...ANTIGRAVITY_DEFAULT_EFFORT_PROFILES.high],
      }),
      ownedFlags: ANTIGRAVITY_OWNED_FLAGS,
      isEffortKnob: isAntigravityEffortKnob,
      planTurn: async (request) => {
        const { AntigravityStreamParser } = await import("./antigravity-stream-parser.js");
        return {
          args: buildAntigravityArgs(request),
          stdin: "",
          parser: new AntigravityStreamParser(),
          outcome: antigravityTurnOutcome,
        };
      },
    },
    options,
  );
}

/** The CLI's answer to a `--conversation` it does not have (deleted state, another machine). */
const LOST_CONVERSATION = /\bconversation\b[^\n]*\bnot found\b|\bno conversation found\b|\bunknown conversation\b/i;

/** Decides how a finished (not aborted) run ended, from the process result and what its output said. */
export function antigravityTurnOutcome(run: ProviderProcessResult, summary: AntigravityStreamSummary): ProviderTurnOutcome {
  const signedOut = summary.notAuthenticatedText ?? antigravityLoginLine(run.stderr);
  if (signedOut !== null) {
    return {
      ok: false,
      error: new PedelecError("PROVIDER_NOT_AUTHENTICATED", `agy is not signed in (${signedOut}); run "agy" in a terminal once to sign in`, {
        provider: "antigravity",
        providerMessage: signedOut,
      }),
    };
  }
  const failedResult = summary.result && !summary.result.ok ? summary.result.message : "";
  if (run.exitCode !== 0) {
    const error = exitFailure("agy", run, failedResult);
    const lost = LOST_CONVERSATION.test(run.stderr) || LOST_CONVERSATION.test(failedResult);
    return lost ? { ok: false, error, conversationLost: true } : { ok: false, error };
  }
  if (summary.problem !== null) {
    return { ok: false, error: unreadableLineFailure("agy", summary.problem, summary.invalidLineCount, "event") };
  }
  if (summary.result === null) {
    return {
      ok: false,
      error: new PedelecError("PROVIDER_OUTPUT_INVALID", "agy ended without a result", {
        ignoredLineCount: summary.ignoredLineCount,
        ignoredLineSamples: summary.ignoredLineSamples,
        unknownEventCount: summary.unknownEventCount,
        droppedLineCount: summary.droppedLineCount,
        stderr: run.stderr,
      }),
    };
  }
  if (!summary.result.ok) {
    const error = new PedelecError("PROVIDER_FAILED", summary.result.message, { status: summary.result.status });
    return LOST_CONVERSATION.test(summary.result.message) ? { ok: false, error, conversationLost: true } : { ok: false, error };
  }
  return { ok: true };
}
