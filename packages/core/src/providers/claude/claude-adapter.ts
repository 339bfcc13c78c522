import { PedelecError } from "@pedelec/protocol/pedelec-error";
import type { ProviderAdapter, ProviderTurnOutcome } from "../provider-adapter.js";
import { defineCliAdapter } from "../cli-adapter.js";
import { exitFailure, unreadableLineFailure } from "../cli-runner.js";
import type { ProviderProcessResult } from "../provider-process.js";
import { buildClaudeArgs, CLAUDE_OWNED_FLAGS } from "./claude-args.js";
import type { ClaudeStreamSummary } from "./claude-stream-parser.js";

export interface ClaudeAdapterOptions {
  /** Time between SIGTERM and SIGKILL of the process group on cancel (default 2 s). */
  killGraceMs?: number;
}

/** The `claude` (Claude Code) provider: print mode, stream-json on stdout, prompt on stdin. */
export function createClaudeAdapter(options: ClaudeAdapterOptions = {}): ProviderAdapter {
  return defineCliAdapter(
    {
      code: "claude",
      displayName: "Claude Code",
      programName: "claude",
      capabilities: { textDeltas: true, resume: true },
      defaultEffortProfiles: () => ({
        low: ["--effort", "low"],
        medium: ["--effort", "medium"],
        high: ["--effort", "high"],
      }),
      ownedFlags: CLAUDE_OWNED_FLAGS,
      planTurn: async (request) => {
        const { ClaudeStreamParser } = await import("./claude-stream-parser.js");
        return {
          args: buildClaudeArgs(request),
          stdin: request.prompt,
          parser: new ClaudeStreamParser(),
          outcome: claudeTurnOutcome,
        };
      },
    },
    options,
  );
}

/** Claude Code's answer to a `--resume` whose conversation it no longer has (another cwd, or deleted state). */
const LOST_CONVERSATION = /No conversation found with session ID/i;

/** Decides how a finished (not aborted) run ended, from the process result and what its output said. */
export function claudeTurnOutcome(run: ProviderProcessResult, summary: ClaudeStreamSummary): ProviderTurnOutcome {
  if (summary.notAuthenticatedText !== null) {
    return {
      ok: false,
      error: new PedelecError(
        "PROVIDER_NOT_AUTHENTICATED",
        `claude is not signed in (${summary.notAuthenticatedText.trim()}); run "claude auth login" in a terminal`,
        { provider: "claude", providerMessage: summary.notAuthenticatedText },
      ),
    };
  }
  if (run.exitCode !== 0) {
    const failedResult = summary.result && !summary.result.ok ? summary.result.message : "";
    const error = exitFailure("claude", run, failedResult);
    return LOST_CONVERSATION.test(run.stderr) ? { ok: false, error, conversationLost: true } : { ok: false, error };
  }
  if (summary.problem !== null) {
    return { ok: false, error: unreadableLineFailure("claude", summary.problem, summary.invalidLineCount) };
  }
  if (summary.result === null) {
    return {
      ok: false,
      error: new PedelecError("PROVIDER_OUTPUT_INVALID", "claude ended without a result", {
        ignoredLineCount: summary.ignoredLineCount,
        ignoredLineSamples: summary.ignoredLineSamples,
        droppedLineCount: summary.droppedLineCount,
        stderr: run.stderr,
      }),
    };
  }
  if (!summary.result.ok) {
    return {
      ok: false,
      error: new PedelecError("PROVIDER_FAILED", summary.result.message, { subtype: summary.result.subtype }),
    };
  }
  return { ok: true };
}
