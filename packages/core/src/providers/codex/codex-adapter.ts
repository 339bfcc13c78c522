import { PROVIDER_EXPLICIT_EFFORTS } from "@pedelec/protocol/explicit-effort";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import type { ProviderAdapter, ProviderTurnOutcome } from "../provider-adapter.js";
import { defineCliAdapter } from "../cli-adapter.js";
import { exitFailure, unreadableLineFailure } from "../cli-runner.js";
import { isOverloadStatus, overloadedError, quotedHttpStatus } from "../model-service-status.js";
import type { ProviderProcessResult } from "../provider-process.js";
import { scrubProviderOutcome } from "../provider-text-scrubber.js";
import { buildCodexArgs, CODEX_OWNED_FLAGS, codexToolName, isCodexEffortKnob } from "./codex-args.js";
import { discoverCodex } from "./codex-discovery.js";
import { codexUserMcpServers } from "./codex-user-servers.js";
import { codexNotAuthenticatedError, isCodexLoginRequiredText } from "./codex-login-text.js";
import type { CodexStreamSummary } from "./codex-stream-parser.js";

export interface CodexAdapterOptions {
  /** Time between SIGTERM and SIGKILL of the process group on cancel (default 2 s). */
  killGraceMs?: number;
}

/** The `codex` (OpenAI Codex CLI) provider: `codex exec --json`, JSONL events on stdout, prompt on stdin. */
export function createCodexAdapter(options: CodexAdapterOptions = {}): ProviderAdapter {
  return defineCliAdapter(
    {
      discover: discoverCodex,
      code: "codex",
      programName: "codex",
      // `codex exec --json` emits agent messages only when complete; `exec resume <id>` continues a thread.
      capabilities: { textDeltas: false, resume: true },
      nativeToolName: codexToolName,
      defaultEffortProfiles: () => ({
        low: ["-c", "model_reasoning_effort=low"],
        medium: ["-c", "model_reasoning_effort=medium"],
        high: ["-c", "model_reasoning_effort=high"],
      }),
      explicitEffort: { levels: PROVIDER_EXPLICIT_EFFORTS.codex, argv: (effort) => ["-c", `model_reasoning_effort=${effort}`] },
      ownedFlags: CODEX_OWNED_FLAGS,
      isEffortKnob: isCodexEffortKnob,
      planTurn: async (request) => {
        const { CodexStreamParser } = await import("./codex-stream-parser.js");
        // A sandbox session gets Pedelec's MCP server only: the user's own servers may reach what the sandbox does not.
        const serversOff =
          request.access === "sandbox" ? await codexUserMcpServers(request.executablePath, request.workspacePath, request.env, request.signal) : [];
        return {
          args: buildCodexArgs({ ...request, serversOff }),
          stdin: request.prompt,
          parser: new CodexStreamParser(),
          outcome: codexTurnOutcome,
        };
      },
    },
    options,
  );
}

/** codex's answer to `exec resume <id>` for a thread it has no rollout of (deleted state, another CODEX_HOME). */
const LOST_CONVERSATION = /no rollout found for (?:thread|conversation) id/i;

const STDIN_NOTICE = /^Reading prompt from stdin\.\.\.\r?\n/m;

/**
 * codex's words for a model service that is overloaded or rate-limited, when it gave up: `exceeded retry limit, last
 * status: 429 Too Many Requests`, and for 5xx its own `We’re currently experiencing high demand…` (0.169.0).
 */
const OVERLOAD_TEXT = /\bexceeded retry limit\b|\bhigh demand\b|\brate[ _-]?limit/i;

/**
 * Decides how a finished (not aborted) run ended, from the process result and what its output said. The error's
 * message and details are scrubbed of endpoint URLs and keys: they reach the page.
 */
export function codexTurnOutcome(finished: ProviderProcessResult, summary: CodexStreamSummary): ProviderTurnOutcome {
  return scrubProviderOutcome(judgeCodexRun(finished, summary));
}

function judgeCodexRun(finished: ProviderProcessResult, summary: CodexStreamSummary): ProviderTurnOutcome {
  // codex announces on stderr that it reads the prompt from stdin; that line says nothing about a failure.
  const run = { ...finished, stderr: finished.stderr.replace(STDIN_NOTICE, "") };
  const signedOut = summary.notAuthenticatedText ?? (isCodexLoginRequiredText(run.stderr) ? lastLine(run.stderr) : null);
  if (signedOut !== null) return { ok: false, error: codexNotAuthenticatedError(signedOut) };
  if (run.exitCode !== 0) {
    if (summary.turnEnd !== null && !summary.turnEnd.ok) {
      return { ok: false, error: failedTurn(summary.turnEnd.message, { exitCode: run.exitCode, stderr: run.stderr }) };
    }
    const error = exitFailure("codex", run, summary.errorMessages.at(-1) ?? "");
    return LOST_CONVERSATION.test(run.stderr) ? { ok: false, error, conversationLost: true } : { ok: false, error };
  }
  if (summary.problem !== null) {
    return { ok: false, error: unreadableLineFailure("codex", summary.problem, summary.invalidLineCount) };
  }
  if (summary.turnEnd === null) {
    // An error event without a turn end is how codex reports a failure it gave up on.
    const lastError = summary.errorMessages.at(-1);
    if (lastError !== undefined) return { ok: false, error: failedTurn(lastError, { errorMessages: summary.errorMessages }) };
    return {
      ok: false,
      error: new PedelecError("PROVIDER_OUTPUT_INVALID", "codex ended without turn.completed or turn.failed", {
        unknownLineCount: summary.unknownLineCount,
        ignoredLineCount: summary.ignoredLineCount,
        ignoredLineSamples: summary.ignoredLineSamples,
        droppedLineCount: summary.droppedLineCount,
        stderr: run.stderr,
      }),
    };
  }
  // Error events before a completed turn were retries codex recovered from.
  if (!summary.turnEnd.ok) return { ok: false, error: failedTurn(summary.turnEnd.message, {}) };
  return { ok: true };
}

/** A turn codex failed: PROVIDER_OVERLOADED when its message says the service was busy, PROVIDER_FAILED otherwise. */
function failedTurn(message: string, details: Record<string, unknown>): PedelecError {
  const text = message.trim() || "codex reported a failed turn";
  const httpStatus = quotedHttpStatus(text);
  if (isOverloadStatus(httpStatus) || OVERLOAD_TEXT.test(text)) {
    return overloadedError(text, { provider: "codex", ...(httpStatus === null ? {} : { httpStatus }), ...details });
  }
  return new PedelecError("PROVIDER_FAILED", text, details);
}

function lastLine(text: string): string {
  return (
    text
      .trim()
      .split("\n")
      .filter((line) => isCodexLoginRequiredText(line))
      .at(-1) ?? text.trim()
  );
}
