import type { EffortLevel } from "@pedelec/protocol/domain";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import type {
  ProviderAdapter,
  ProviderCapabilities,
  ProviderDiscovery,
  ProviderEvent,
  ProviderTurnOutcome,
  ProviderTurnRequest,
} from "../provider-adapter.js";
import { probeVersion } from "../provider-discovery.js";
import { runProviderProcess, type ProviderProcessResult } from "../provider-process.js";
import { buildClaudeArgs } from "./claude-args.js";
import { ClaudeStreamParser, type ClaudeStreamSummary } from "./claude-stream-parser.js";

export interface ClaudeAdapterOptions {
  /** Time between SIGTERM and SIGKILL of the process group on cancel (default 2 s). */
  killGraceMs?: number;
}

const CAPABILITIES: ProviderCapabilities = { textDeltas: true, resume: true, effort: true };

/** The `claude` (Claude Code) provider: print mode, stream-json on stdout, prompt on stdin. */
export function createClaudeAdapter(options: ClaudeAdapterOptions = {}): ProviderAdapter {
  return {
    code: "claude",
    displayName: "Claude Code",
    programName: "claude",
    capabilities: CAPABILITIES,
    defaultEffortProfiles: (): Record<EffortLevel, string[]> => ({
      low: ["--effort", "low"],
      medium: ["--effort", "medium"],
      high: ["--effort", "high"],
    }),
    discover: (executablePath: string, signal: AbortSignal): Promise<ProviderDiscovery> =>
      probeVersion(executablePath, signal),
    runTurn: (request, onEvent) => runClaudeTurn(request, onEvent, options),
  };
}

async function runClaudeTurn(
  request: ProviderTurnRequest,
  onEvent: (event: ProviderEvent) => void,
  options: ClaudeAdapterOptions,
): Promise<ProviderTurnOutcome> {
  let args: string[];
  try {
    args = buildClaudeArgs(request);
  } catch (error) {
    return { ok: false, error: PedelecError.from(error, "INVALID_INPUT") };
  }

  const parser = new ClaudeStreamParser();
  // A throwing listener must not break reading the child's output; the turn fails with it instead.
  let listenerError: unknown = null;
  const deliver = (events: ProviderEvent[]): void => {
    for (const event of events) {
      try {
        onEvent(event);
      } catch (error) {
        listenerError ??= error;
      }
    }
  };

  const run = await runProviderProcess({
    executablePath: request.executablePath,
    args,
    cwd: request.workspacePath,
    env: request.env,
    stdin: request.prompt,
    signal: request.signal,
    onStdoutLine: (line) => deliver(parser.feed(line)),
    onStdoutLineDropped: () => deliver(parser.lineDropped()),
    ...(request.onProcessStarted === undefined ? {} : { onSpawned: request.onProcessStarted }),
    ...(options.killGraceMs === undefined ? {} : { killGraceMs: options.killGraceMs }),
  });
  deliver(parser.finish());

  if (request.signal.aborted) return { ok: false, error: abortError(request.signal) };
  if (listenerError !== null) {
    return { ok: false, error: PedelecError.from(listenerError, "PROVIDER_FAILED", "a provider event listener failed") };
  }
  return claudeTurnOutcome(run, parser.summary());
}

function abortError(signal: AbortSignal): PedelecError {
  return signal.reason instanceof PedelecError
    ? signal.reason
    : new PedelecError("TURN_CANCELLED", "The turn was cancelled");
}

/** Decides how a finished (not aborted) run ended, from the process result and what its output said. */
export function claudeTurnOutcome(run: ProviderProcessResult, summary: ClaudeStreamSummary): ProviderTurnOutcome {
  if (summary.notAuthenticatedText !== null) {
    return {
      ok: false,
      error: new PedelecError(
        "PROVIDER_NOT_AUTHENTICATED",
        `claude is not signed in (${summary.notAuthenticatedText.trim()}); run "claude auth login" in a terminal`,
        { providerMessage: summary.notAuthenticatedText },
      ),
    };
  }
  if (run.spawnError) {
    return {
      ok: false,
      error: new PedelecError("PROVIDER_UNAVAILABLE", `claude could not be started: ${run.spawnError.message}`, {
        spawnErrorCode: run.spawnError.code,
      }),
    };
  }
  if (run.exitCode !== 0) {
    const status = run.exitCode === null ? `was killed by ${run.signal ?? "a signal"}` : `exited with code ${run.exitCode}`;
    const failedResult = summary.result && !summary.result.ok ? summary.result.message : "";
    return {
      ok: false,
      error: new PedelecError("PROVIDER_FAILED", run.stderr.trim() || failedResult || `claude ${status}`, {
        exitCode: run.exitCode,
        signal: run.signal,
        stderr: run.stderr,
        stderrTruncated: run.stderrTruncated,
      }),
    };
  }
  if (summary.problem !== null) {
    return {
      ok: false,
      error: new PedelecError(
        "PROVIDER_OUTPUT_INVALID",
        `claude printed a "${summary.problem.lineType}" line that Pedelec cannot read: ${summary.problem.issues}`,
        { invalidLineCount: summary.invalidLineCount },
      ),
    };
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
