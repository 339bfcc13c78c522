import type { AccessMode } from "@pedelec/protocol/domain";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import type { ScriptRunResult, ScriptRunSpec } from "@pedelec/protocol/script-run";
import type { ScriptRunner } from "@pedelec/script-runtime/script-runner";
import { requireFreeSpace, watchFreeSpace, type FreeBytesOf } from "./disk-space.js";

/** Who asked for a run: the page (`workspace.run()`) or the session's agent (`pedelec-ts-runtime`). */
export type RunCaller = "page" | "agent";

/** Runs one session may have going at once; more is almost certainly a loop gone wrong. */
export const MAX_CONCURRENT_RUNS = 4;

export interface SessionScriptsOptions {
  threadId: string;
  workspaceRoot: string;
  /** The runner, created on first use (locating Deno and the OS wall takes a moment). */
  runner: () => Promise<ScriptRunner>;
  /** The free bytes a run must leave on the workspace's disk (settings' limits.minFreeDiskBytes), read per run. */
  minFreeDiskBytes: () => Promise<number>;
  /** How the free space is measured; the file system's own figure unless a test gives another. */
  freeBytesOf?: FreeBytesOf;
  /** How often a running script's disk is looked at; FREE_SPACE_POLL_MS unless a test shortens it. */
  freeSpacePollMs?: number;
}

export interface RunInput {
  runId: string;
  caller: RunCaller;
  access: AccessMode;
  spec: ScriptRunSpec;
  /** Aborts the run (the agent's connection closed, the page cancelled). */
  signal?: AbortSignal;
  onOutput?: (stream: "stdout" | "stderr", chunk: Buffer) => void;
}

interface ActiveRun {
  caller: RunCaller;
  access: AccessMode;
  controller: AbortController;
  /** Settles once the run's processes are gone. */
  finished: Promise<unknown>;
}

/** The script runs of one session: started, counted, and stopped when the turn, the session or a grant goes away. */
export class SessionScripts {
  readonly #runs = new Map<string, ActiveRun>();
  #closedBecause: string | undefined;

  constructor(private readonly options: SessionScriptsOptions) {}

  get active(): number {
    return this.#runs.size;
  }

  async run(input: RunInput): Promise<ScriptRunResult> {
    if (this.#closedBecause !== undefined) throw new PedelecError("SESSION_ENDED", `session ${this.options.threadId} has ended`);
    if (this.#runs.has(input.runId)) throw new PedelecError("INVALID_INPUT", `a run ${input.runId} is already going on`);
    if (this.#runs.size >= MAX_CONCURRENT_RUNS) {
      throw new PedelecError("SESSION_BUSY", `session ${this.options.threadId} already has ${MAX_CONCURRENT_RUNS} scripts running`);
    }
    const controller = new AbortController();
    const onCallerAbort = (): void => controller.abort(input.signal?.reason ?? new PedelecError("DENO_CANCELLED", "the run was cancelled"));
    if (input.signal?.aborted) onCallerAbort();
    input.signal?.addEventListener("abort", onCallerAbort, { once: true });
    let markFinished: () => void = () => undefined;
    const finished = new Promise<void>((resolvePromise) => (markFinished = resolvePromise));
    this.#runs.set(input.runId, { caller: input.caller, access: input.access, controller, finished });
    let stopWatching = (): void => undefined;
    try {
      const floor = await this.options.minFreeDiskBytes();
      await requireFreeSpace(this.options.workspaceRoot, 0, floor, "a script", this.options.freeBytesOf);
      const runner = await this.options.runner();
      stopWatching = watchFreeSpace(this.options.workspaceRoot, floor, (error) => controller.abort(error), {
        ...(this.options.freeBytesOf ? { freeBytesOf: this.options.freeBytesOf } : {}),
        ...(this.options.freeSpacePollMs ? { pollMs: this.options.freeSpacePollMs } : {}),
      });
      let result: ScriptRunResult;
      try {
        result = await runner.run({
          runId: input.runId,
          threadId: this.options.threadId,
          workspaceRoot: this.options.workspaceRoot,
          access: input.access,
          ...input.spec,
          signal: controller.signal,
          onOutput: input.onOutput,
        });
      } catch (error) {
        // Stopped before the script started: say why, as for a run stopped later.
        if (controller.signal.aborted && (error as PedelecError).code === "DENO_CANCELLED") throw cancellation(controller.signal.reason);
        throw error;
      }
      // Stopped because the disk filled up: the caller, page or agent, learns it by its code, not as a cancel.
      const reason: unknown = controller.signal.reason;
      if (result.termination === "cancelled" && reason instanceof PedelecError && reason.code === "DISK_SPACE_LOW") throw reason;
      return input.caller === "page" ? pageRunOutcome(result, reason) : result;
    } finally {
      stopWatching();
      input.signal?.removeEventListener("abort", onCallerAbort);
      this.#runs.delete(input.runId);
      markFinished();
    }
  }

  /** Stops one run; false when it is not running. */
  cancel(runId: string, reason: PedelecError): boolean {
    const run = this.#runs.get(runId);
    if (!run) return false;
    run.controller.abort(reason);
    return true;
  }

  /** Stops the runs that match; returns how many. */
  stopWhere(matches: (run: { caller: RunCaller; access: AccessMode }) => boolean, reason: PedelecError): number {
    let stopped = 0;
    for (const run of this.#runs.values()) {
      if (!matches(run) || run.controller.signal.aborted) continue;
      run.controller.abort(reason);
      stopped += 1;
    }
    return stopped;
  }

  /** The session ended: every run stops and no new one starts. Resolves once their processes are gone. */
  async close(reason: PedelecError): Promise<void> {
    this.#closedBecause ??= reason.message;
    const finishing = [...this.#runs.values()].map((run) => run.finished);
    this.stopWhere(() => true, reason);
    await Promise.all(finishing);
  }
}

/**
 * What a page's `workspace.run()` gets: the result for every run that ended on its own or by its timeout, a coded
 * error when Pedelec stopped it (cancel, session end, revocation, memory).
 */
export function pageRunOutcome(result: ScriptRunResult, reason: unknown): ScriptRunResult {
  if (result.termination === "cancelled") throw cancellation(reason, { durationMs: result.durationMs });
  if (result.termination === "memory-limit") {
    throw new PedelecError("DENO_MEMORY_LIMIT", "the script used more memory than a run may use and was stopped", {
      durationMs: result.durationMs,
    });
  }
  return result;
}

function cancellation(reason: unknown, details?: unknown): PedelecError {
  return new PedelecError("DENO_CANCELLED", reason instanceof Error ? reason.message : "the run was cancelled", details);
}
