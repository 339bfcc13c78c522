import { PedelecError } from "@pedelec/protocol/pedelec-error";
import type { PageRequestPayload } from "@pedelec/protocol/page-wire";
import { DEFAULT_RUN_TIMEOUT_MS } from "@pedelec/protocol/script-run";
import type { Bridge } from "./bridge.js";
import { randomId } from "./random-id.js";
import { validateRequestPayload } from "./request-validation.js";
import type { PedelecRunOptions, PedelecRunResult } from "./types.js";

/** What a session hands the keeper of its script runs. */
export interface WorkspaceRunsInit {
  readonly sessionId: string;
  readonly bridge: Bridge;
  /** Resolves once the live extension port follows the session (after a lost port it resubscribes first). */
  readonly ready: () => Promise<void>;
  /** Why no run may start now (the session ended), or undefined. */
  readonly refusal: () => PedelecError | undefined;
}

type RunPayload = PageRequestPayload<"runWorkspaceScript"> & { timeoutMs: number };

interface RunState {
  settled: boolean;
  /** The run request went out, so stopping the run needs a cancel request. */
  sent: boolean;
}

/**
 * The page's side of `session.workspace.run()`: each call gets its own run id, a deadline that leaves the script its
 * whole timeout, and a cancel path through its AbortSignal. Pending runs fail at once when the session ends.
 */
export class WorkspaceRuns {
  readonly #init: WorkspaceRunsInit;
  readonly #pending = new Map<string, (error: PedelecError) => void>();

  constructor(init: WorkspaceRunsInit) {
    this.#init = init;
  }

  run(options: PedelecRunOptions): Promise<PedelecRunResult> {
    const refusal = this.#init.refusal();
    if (refusal !== undefined) return Promise.reject(refusal);
    const runId = randomId();
    let payload: RunPayload;
    try {
      payload = runPayload(this.#init.sessionId, runId, options);
    } catch (error) {
      return Promise.reject(PedelecError.from(error, "INVALID_INPUT"));
    }
    const signal = options.signal;
    if (signal?.aborted) return Promise.reject(runCancelled(signal));
    return new Promise<PedelecRunResult>((resolve, reject) => {
      const state: RunState = { settled: false, sent: false };
      const settle = (): boolean => {
        if (state.settled) return false;
        state.settled = true;
        this.#pending.delete(runId);
        signal?.removeEventListener("abort", onAbort);
        return true;
      };
      const fail = (error: PedelecError): void => {
        if (settle()) reject(error);
      };
      const onAbort = (): void => {
        if (!settle()) return;
        reject(runCancelled(signal));
        if (state.sent) this.#cancel(runId);
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.#pending.set(runId, fail);
      this.#start(payload, state).then(
        (result) => {
          if (result !== undefined && settle()) resolve(result);
        },
        (error: unknown) => {
          const failure = PedelecError.from(error, "SDK_TRANSPORT_ERROR");
          // Nobody waits for the answer any more, so the run should not go on using the user's machine.
          if (failure.code === "SDK_BRIDGE_TIMEOUT" && state.sent && !state.settled) this.#cancel(runId);
          fail(failure);
        },
      );
    });
  }

  /** The session is over: every pending run rejects with `error` (Core stops the runs of an ended session). */
  failAll(error: PedelecError): void {
    for (const fail of [...this.#pending.values()]) fail(error);
  }

  async #start(payload: RunPayload, state: RunState): Promise<PedelecRunResult | undefined> {
    await this.#init.ready();
    if (state.settled) return undefined;
    const bridge = this.#init.bridge;
    state.sent = true;
    // The bridge timeout covers the hops; the script gets its own timeout on top of it.
    const answer = await bridge.request("runWorkspaceScript", payload, { timeoutMs: payload.timeoutMs + bridge.timeoutMs });
    return answer.result;
  }

  #cancel(runId: string): void {
    // Best effort: if the cancel cannot be delivered, the run still ends by its own timeout.
    this.#init.bridge.request("cancelWorkspaceRun", { sessionId: this.#init.sessionId, runId }).catch(() => undefined);
  }
}

function runPayload(sessionId: string, runId: string, options: PedelecRunOptions): RunPayload {
  if (typeof options !== "object" || options === null) {
    throw new PedelecError("INVALID_INPUT", "workspace.run needs an options object with an entry or a source");
  }
  if ((options.entry === undefined) === (options.source === undefined)) {
    throw new PedelecError("INVALID_INPUT", "workspace.run needs exactly one of entry and source");
  }
  if (options.signal !== undefined && !isAbortSignal(options.signal)) {
    throw new PedelecError("INVALID_INPUT", "workspace.run: signal must be an AbortSignal");
  }
  const payload: Record<string, unknown> = {
    sessionId,
    runId,
    access: options.access ?? "sandbox",
    timeoutMs: options.timeoutMs ?? DEFAULT_RUN_TIMEOUT_MS,
  };
  if (options.entry !== undefined) payload.entry = options.entry;
  if (options.source !== undefined) payload.source = options.source;
  if (options.args !== undefined) payload.args = options.args;
  if (options.importMap !== undefined) payload.importMap = options.importMap;
  return validateRequestPayload("runWorkspaceScript", payload) as RunPayload;
}

/** Duck-typed, so a signal from another frame (another realm's AbortSignal class) still works. */
function isAbortSignal(value: unknown): value is AbortSignal {
  if (typeof value !== "object" || value === null) return false;
  const candidate = value as Partial<AbortSignal>;
  return typeof candidate.aborted === "boolean" && typeof candidate.addEventListener === "function";
}

function runCancelled(signal: AbortSignal | undefined): PedelecError {
  const reason: unknown = signal?.reason;
  const detail = reason instanceof Error ? reason.message : typeof reason === "string" ? reason : undefined;
  return new PedelecError("DENO_CANCELLED", "The run was cancelled", detail === undefined ? undefined : { reason: detail });
}
