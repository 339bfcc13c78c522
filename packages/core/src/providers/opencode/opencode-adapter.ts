import { PROVIDER_EXPLICIT_EFFORTS } from "@pedelec/protocol/explicit-effort";
import { opencodeModelVariants } from "./opencode-model-variants.js";
import { stripVTControlCharacters } from "node:util";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import type { ProviderAdapter, ProviderTurnOutcome } from "../provider-adapter.js";
import { defineCliAdapter } from "../cli-adapter.js";
import { exitFailure, unreadableLineFailure } from "../cli-runner.js";
import { isCredentialRefusalStatus, isOverloadStatus, overloadedError } from "../model-service-status.js";
import { scrubProviderOutcome, scrubProviderText } from "../provider-text-scrubber.js";
import type { ProviderProcessResult } from "../provider-process.js";
import { buildOpencodeArgs, OPENCODE_OWNED_FLAGS, opencodeConfigContent, opencodeSandboxEnv, opencodeToolName } from "./opencode-args.js";
import { opencodeUserMcpServers } from "./opencode-user-servers.js";
import type { OpencodeReportedError, OpencodeStreamSummary } from "./opencode-stream-parser.js";

export interface OpencodeAdapterOptions {
  /** Time between SIGTERM and SIGKILL of the process group on cancel (default 2 s). */
  killGraceMs?: number;
}

/**
 * The `opencode` provider: `opencode run --format json`, the prompt on stdin, the session's MCP server through
 * OPENCODE_CONFIG_CONTENT, sandbox permissions through OPENCODE_PERMISSION. Text arrives only as finished parts, so
 * there are no text deltas.
 */
export function createOpencodeAdapter(options: OpencodeAdapterOptions = {}): ProviderAdapter {
  return defineCliAdapter<OpencodeStreamSummary>(
    {
      code: "opencode",
      programName: "opencode",
      capabilities: { textDeltas: false, resume: true },
      nativeToolName: opencodeToolName,
      // `--variant` names are the model provider's own; OpenCode leaves a model's defaults alone for a name it lacks.
      defaultEffortProfiles: () => ({
        low: ["--variant", "low"],
        medium: ["--variant", "medium"],
        high: ["--variant", "high"],
      }),
      // `--variant` takes the model's own variant names (provider-specific: high and max for Anthropic's, up to xhigh
      // for OpenAI's), so the model's are asked for.
      explicitEffort: {
        levels: PROVIDER_EXPLICIT_EFFORTS.opencode,
        argv: (effort) => ["--variant", effort],
        modelLevels: async ({ executablePath, model, env, signal }) => {
          const variants = await opencodeModelVariants(executablePath, model, env, signal);
          return PROVIDER_EXPLICIT_EFFORTS.opencode.filter((level) => variants?.includes(level));
        },
      },
      ownedFlags: OPENCODE_OWNED_FLAGS,
      planTurn: async (request) => {
        const args = buildOpencodeArgs(request);
        const { OpencodeStreamParser } = await import("./opencode-stream-parser.js");
        const resuming = request.providerSessionId !== null;
        // A sandbox run gets Pedelec's MCP server only: the user's own servers may reach what the sandbox does not.
        const serversOff = request.access === "sandbox" ? await opencodeUserMcpServers(request.env) : null;
        return {
          args,
          stdin: request.prompt,
          env: {
            OPENCODE_CONFIG_CONTENT: opencodeConfigContent(request.toolServer, request.env.OPENCODE_CONFIG_CONTENT, serversOff),
            ...(request.access === "sandbox" ? opencodeSandboxEnv() : {}),
          },
          parser: new OpencodeStreamParser(),
          outcome: (run, summary) => opencodeTurnOutcome(run, summary, resuming),
        };
      },
    },
    options,
  );
}

/** OpenCode's answer to `--session <id>` when it has no such session (printed on stderr, exit 1). */
const LOST_CONVERSATION = /\bSession not found\b/;

/**
 * Decides how a finished (not aborted) run ended, from the process result and what its output said. The error's
 * message and details are scrubbed of endpoint URLs and keys: they reach the page.
 */
export function opencodeTurnOutcome(run: ProviderProcessResult, summary: OpencodeStreamSummary, resuming: boolean): ProviderTurnOutcome {
  return scrubProviderOutcome(judgeOpencodeRun(run, summary, resuming));
}

function judgeOpencodeRun(run: ProviderProcessResult, summary: OpencodeStreamSummary, resuming: boolean): ProviderTurnOutcome {
  if (summary.notAuthenticatedText !== null) {
    const text = scrubProviderText(summary.notAuthenticatedText.trim());
    const httpStatus = summary.error?.statusCode ?? null;
    const message = isCredentialRefusalStatus(httpStatus)
      ? `opencode's model provider refused its credentials (${text}); run "opencode auth login" in a terminal, or fix the provider's API key in opencode's config`
      : `opencode has no valid credentials for its model provider (${text}); run "opencode auth login" in a terminal`;
    return {
      ok: false,
      error: new PedelecError("PROVIDER_NOT_AUTHENTICATED", message, {
        provider: "opencode",
        providerMessage: text,
        errorName: summary.error?.name ?? null,
        ...(httpStatus === null ? {} : { httpStatus }),
      }),
    };
  }
  if (summary.error !== null && isOverloaded(summary.error)) {
    return {
      ok: false,
      error: overloadedError(summary.error.message, {
        provider: "opencode",
        errorName: summary.error.name,
        ...(summary.error.statusCode === null ? {} : { httpStatus: summary.error.statusCode }),
        ...(run.exitCode === 0 ? {} : { exitCode: run.exitCode }),
      }),
    };
  }
  // OpenCode colours its stderr messages even when stderr is a pipe.
  const plainRun = { ...run, stderr: stripVTControlCharacters(run.stderr) };
  if (run.exitCode !== 0) {
    if (resuming && LOST_CONVERSATION.test(plainRun.stderr)) {
      return { ok: false, error: exitFailure("opencode", plainRun), conversationLost: true };
    }
    const failure = exitFailure("opencode", plainRun);
    if (summary.error === null) return { ok: false, error: failure };
    return {
      ok: false,
      error: new PedelecError("PROVIDER_FAILED", summary.error.message, {
        exitCode: run.exitCode,
        signal: run.signal,
        stderr: plainRun.stderr,
        stderrTruncated: run.stderrTruncated,
        errorName: summary.error.name,
      }),
    };
  }
  if (summary.problem !== null) {
    return { ok: false, error: unreadableLineFailure("opencode", summary.problem, summary.invalidLineCount) };
  }
  if (summary.error !== null) {
    return { ok: false, error: new PedelecError("PROVIDER_FAILED", summary.error.message, { errorName: summary.error.name }) };
  }
  if (!turnFinished(summary)) {
    return {
      ok: false,
      error: new PedelecError("PROVIDER_OUTPUT_INVALID", "opencode ended without finishing the turn", {
        ignoredLineCount: summary.ignoredLineCount,
        ignoredLineSamples: summary.ignoredLineSamples,
        unknownLineCount: summary.unknownLineCount,
        droppedLineCount: summary.droppedLineCount,
        stderr: plainRun.stderr,
      }),
    };
  }
  return { ok: true };
}

/**
 * An error the model's service answered with a busy status (429, 5xx), or one OpenCode retried (`isRetryable`) that
 * came with a status. A retried failure without one (`Cannot connect to API`, no answer at all) is no sign of load.
 */
function isOverloaded(error: OpencodeReportedError): boolean {
  return isOverloadStatus(error.statusCode) || (error.retryable === true && error.statusCode !== null);
}

/**
 * A turn is over when OpenCode said `done` (newer versions), or when its last model step ended for a reason other
 * than calling tools (versions that print no `done`).
 */
function turnFinished(summary: OpencodeStreamSummary): boolean {
  if (summary.done !== null) return true;
  return summary.lastStepFinishReason !== null && summary.lastStepFinishReason !== "tool-calls";
}
