import { PROVIDER_EXPLICIT_EFFORTS } from "@pedelec/protocol/explicit-effort";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import type { ProviderAdapter, ProviderTurnOutcome } from "../provider-adapter.js";
import { defineCliAdapter } from "../cli-adapter.js";
import { exitFailure, unreadableLineFailure } from "../cli-runner.js";
import { isCredentialRefusalStatus, isOverloadStatus, overloadedError } from "../model-service-status.js";
import type { ProviderProcessResult } from "../provider-process.js";
import { scrubProviderOutcome } from "../provider-text-scrubber.js";
import { buildClaudeArgs, CLAUDE_OWNED_FLAGS, CLAUDE_SANDBOX_ENV, claudeToolName } from "./claude-args.js";
import { claudeNotAuthenticatedError } from "./claude-login-text.js";
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
      programName: "claude",
      capabilities: { textDeltas: true, resume: true },
      nativeToolName: claudeToolName,
      defaultEffortProfiles: () => ({
        low: ["--effort", "low"],
        medium: ["--effort", "medium"],
        high: ["--effort", "high"],
      }),
      explicitEffort: { levels: PROVIDER_EXPLICIT_EFFORTS.claude, argv: (effort) => ["--effort", effort] },
      ownedFlags: CLAUDE_OWNED_FLAGS,
      planTurn: async (request) => {
        const { ClaudeStreamParser } = await import("./claude-stream-parser.js");
        return {
          args: buildClaudeArgs(request),
          stdin: request.prompt,
          ...(request.access === "sandbox" ? { env: CLAUDE_SANDBOX_ENV } : {}),
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

/**
 * How a failed request reads where no `api_error_status` came with it (older Claude Code versions):
 * `API Error: 529 …`, `API Error: Request rejected (429) · …`.
 */
const QUOTED_API_STATUS = /^API Error: (?:Request rejected \()?(\d{3})\b/;

/**
 * Decides how a finished (not aborted) run ended, from the process result and what its output said. The error's
 * message and details are scrubbed of endpoint URLs and keys: they reach the page.
 */
export function claudeTurnOutcome(run: ProviderProcessResult, summary: ClaudeStreamSummary): ProviderTurnOutcome {
  return scrubProviderOutcome(judgeClaudeRun(run, summary));
}

function judgeClaudeRun(run: ProviderProcessResult, summary: ClaudeStreamSummary): ProviderTurnOutcome {
  const failedResult = summary.result && !summary.result.ok ? summary.result : null;
  const status = summary.apiErrorStatus ?? quotedStatus(failedResult?.message);
  if (summary.notAuthenticatedText !== null || isCredentialRefusalStatus(status)) {
    const text = summary.notAuthenticatedText ?? failedResult?.message ?? `HTTP ${status}`;
    return { ok: false, error: claudeNotAuthenticatedError(text, status) };
  }
  if (failedResult !== null && isOverloadStatus(status)) {
    return {
      ok: false,
      error: overloadedError(failedResult.message, {
        provider: "claude",
        httpStatus: status,
        subtype: failedResult.subtype,
        terminalReason: failedResult.terminalReason,
      }),
    };
  }
  if (run.exitCode !== 0) {
    const error = exitFailure("claude", run, failedResult?.message ?? "");
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
      error: new PedelecError("PROVIDER_FAILED", summary.result.message, {
        subtype: summary.result.subtype,
        ...(summary.result.terminalReason === null ? {} : { terminalReason: summary.result.terminalReason }),
      }),
    };
  }
  return { ok: true };
}

function quotedStatus(message: string | undefined): number | null {
  const match = message === undefined ? null : QUOTED_API_STATUS.exec(message.trim());
  return match === null ? null : Number(match[1]);
}
