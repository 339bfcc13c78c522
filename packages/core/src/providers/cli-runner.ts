import { PedelecError } from "@pedelec/protocol/pedelec-error";
import type { ProviderEvent, ProviderTurnOutcome, ProviderTurnRequest } from "./provider-adapter.js";
import { runProviderProcess, type ProviderProcessResult } from "./provider-process.js";

/**
 * A parser's request to end the turn now: the stream showed a failure the CLI would only sit on (a refused key that
 * it retries for minutes). The runner kills the CLI's process group and the turn fails with `error`, without asking
 * the plan's `outcome`. Only the first request counts; a cancel that came first wins over it.
 */
export interface TurnStopRequest {
  type: "turn-stop-requested";
  error: PedelecError;
}

/** What a parser hands the runner for one line: events for Core, and perhaps a request to stop the turn. */
export type CliStreamOutput = ProviderEvent | TurnStopRequest;

/** Turns one CLI's stdout lines into normalized events, and says at the end what the stream showed. */
export interface CliStreamParser<TSummary> {
  feed(line: string): CliStreamOutput[];
  /** A line longer than the line limit was dropped unread. */
  lineDropped(byteLength: number): CliStreamOutput[];
  /** The stream ended. */
  finish(): CliStreamOutput[];
  summary(): TSummary;
}

/** Everything one CLI needs to run one turn: its argv, what goes on stdin, its parser, and how it ended. */
export interface CliTurnPlan<TSummary> {
  args: string[];
  /** Written to stdin, which is then closed ("" when the prompt travels in argv). */
  stdin: string;
  /** Variables added to the request's environment, for CLIs whose permissions are set there rather than in argv. */
  env?: Record<string, string>;
  parser: CliStreamParser<TSummary>;
  /**
   * How a run that finished on its own (not cancelled) ended: the CLI's auth and failure signals mapped to coded
   * errors. Spawn failures are mapped by the runner before this is asked.
   */
  outcome(run: ProviderProcessResult, summary: TSummary): ProviderTurnOutcome;
}

export interface CliRunOptions {
  /** Time between SIGTERM and SIGKILL of the process group on cancel. */
  killGraceMs?: number;
}

/**
 * The run loop every CLI provider shares: spawns the CLI as a process-group leader in the workspace, feeds stdout
 * lines to the plan's parser, hands events on (a throwing listener fails the turn instead of the read loop), stops the
 * CLI when the parser asks to (TurnStopRequest), maps a cancel to its reason, a stop to its error and a spawn failure
 * to PROVIDER_UNAVAILABLE, and lets the plan judge everything else.
 */
export async function runCliTurn<TSummary>(
  programName: string,
  plan: CliTurnPlan<TSummary>,
  request: ProviderTurnRequest,
  onEvent: (event: ProviderEvent) => void,
  options: CliRunOptions = {},
): Promise<ProviderTurnOutcome> {
  let listenerError: unknown = null;
  // The process runs until the turn is cancelled or a parser asks it to stop, whichever comes first.
  const stop = new AbortController();
  let stopError: PedelecError | null = null;
  const deliver = (outputs: CliStreamOutput[]): void => {
    for (const output of outputs) {
      if (output.type === "turn-stop-requested") {
        if (stopError === null && !request.signal.aborted) {
          stopError = output.error;
          stop.abort(output.error);
        }
        continue;
      }
      try {
        onEvent(output);
      } catch (error) {
        listenerError ??= error;
      }
    }
  };
  const run = await runProviderProcess({
    executablePath: request.executablePath,
    args: plan.args,
    cwd: request.workspacePath,
    env: plan.env === undefined ? request.env : { ...request.env, ...plan.env },
    stdin: plan.stdin,
    signal: AbortSignal.any([request.signal, stop.signal]),
    onStdoutLine: (line) => deliver(plan.parser.feed(line)),
    onStdoutLineDropped: (byteLength) => deliver(plan.parser.lineDropped(byteLength)),
    ...(request.onProcessStarted === undefined ? {} : { onSpawned: request.onProcessStarted }),
    ...(options.killGraceMs === undefined ? {} : { killGraceMs: options.killGraceMs }),
  });
  deliver(plan.parser.finish());

  if (request.signal.aborted) {
    const reason: unknown = request.signal.reason;
    return { ok: false, error: reason instanceof PedelecError ? reason : new PedelecError("TURN_CANCELLED", "The turn was cancelled") };
  }
  if (stopError !== null) return { ok: false, error: stopError };
  if (listenerError !== null) {
    return { ok: false, error: PedelecError.from(listenerError, "PROVIDER_FAILED", "a provider event listener failed") };
  }
  if (run.spawnError) {
    return {
      ok: false,
      error: new PedelecError("PROVIDER_UNAVAILABLE", `${programName} could not be started: ${run.spawnError.message}`, {
        spawnErrorCode: run.spawnError.code,
      }),
    };
  }
  return plan.outcome(run, plan.parser.summary());
}

/** PROVIDER_FAILED for a CLI that exited non-zero or was killed, carrying its stderr. */
export function exitFailure(programName: string, run: ProviderProcessResult, fallbackMessage = ""): PedelecError {
  const status = run.exitCode === null ? `was killed by ${run.signal ?? "a signal"}` : `exited with code ${run.exitCode}`;
  return new PedelecError("PROVIDER_FAILED", run.stderr.trim() || fallbackMessage || `${programName} ${status}`, {
    exitCode: run.exitCode,
    signal: run.signal,
    stderr: run.stderr,
    stderrTruncated: run.stderrTruncated,
  });
}

/** PROVIDER_OUTPUT_INVALID for the first stream line of a known kind that lacked what the parser relies on. */
export function unreadableLineFailure(
  programName: string,
  problem: { lineType: string; issues: string },
  invalidLineCount: number,
  /** What the CLI calls one line of its stream ("event" for agy). */
  lineNoun = "line",
): PedelecError {
  return new PedelecError(
    "PROVIDER_OUTPUT_INVALID",
    `${programName} printed a "${problem.lineType}" ${lineNoun} that Pedelec cannot read: ${problem.issues}`,
    { invalidLineCount },
  );
}

/** A value placed after a flag must not look like a flag itself, or the CLI's option parser would read it as one. */
export function optionValue(programName: string, name: string, value: string): string {
  if (value === "" || value.startsWith("-")) {
    throw new PedelecError("INVALID_INPUT", `${programName} ${name} must not be empty or start with "-"`, { value });
  }
  return value;
}
