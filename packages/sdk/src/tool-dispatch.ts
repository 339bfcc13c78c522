import type { ErrorCode } from "@pedelec/protocol/error-codes";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import type { ToolResultOutcome } from "@pedelec/protocol/requests";
import type { PendingToolCall, SessionEventOf } from "@pedelec/protocol/session-events";
import { toJsonResult } from "./json-result.js";
import type { ToolCallLedger } from "./tool-call-ledger.js";
import type { ArgsCheck, ArgsValidator } from "./tool-schema/tool-args-check.js";
import type { PedelecEventContext, ToolHandler, ToolHandlerContext } from "./types.js";

export type ToolCallRequest = PendingToolCall;
export type ToolCallSettledOutcome = SessionEventOf<"tool-call-settled">["outcome"];

export interface ToolDispatchOptions {
  readonly sessionId: string;
  /** Handlers that came with the tool definitions (`defineTool({ handler })`). */
  readonly inlineHandlers: ReadonlyMap<string, ToolHandler>;
  /**
   * The page's check of each declared tool's arguments, run before whichever handler answers the call: an invalid call
   * is answered `TOOL_ARGS_INVALID` and no handler runs. Tools without one (a resumed session told no tools) get the
   * arguments as Core checked them.
   */
  readonly argsValidators?: ReadonlyMap<string, ArgsValidator>;
  /** The calls this page took, shared by the page's handles. */
  readonly ledger: ToolCallLedger;
  /** Asks Core for the call; true when this page now holds it, false when another page does. */
  claim(toolRequestId: string): Promise<boolean>;
  /** Delivers an outcome to Core; rejects when the delivery failed or Core refused it. */
  submit(toolRequestId: string, outcome: ToolResultOutcome): Promise<unknown>;
  /** Called with a SUBMIT_TOOL_RESULT_FAILED error when a call could not be taken or its result not delivered. */
  reportFailure(error: PedelecError, call: ToolCallRequest): void;
}

/** What happens to the page's hold on a call when its run is stopped from outside. */
export type AbortFate = "finish" | "release";

interface ActiveCall {
  readonly controller: AbortController;
  readonly turnId: string;
  /** Set once this page's outcome is on its way to Core: a refusal after that is reported, whatever aborted since. */
  submitting: boolean;
}

interface Registration {
  readonly handler: ToolHandler;
}

const SETTLED_ABORT_CODES: Record<Exclude<ToolCallSettledOutcome, "answered">, ErrorCode> = {
  "timed-out": "TOOL_TIMEOUT",
  cancelled: "TURN_CANCELLED",
  abandoned: "TURN_CANCELLED",
};

/** Core's answers to a claim for a call that no longer waits: nothing to run, nothing to report. */
const STALE_CLAIM_CODES: ReadonlySet<string> = new Set(["TOOL_CALL_NOT_PENDING", "TOOL_TIMEOUT", "TOOL_CALL_CLAIMED"]);

/**
 * Runs the page's tool handlers for one session, exactly once per call: claims the call from Core first (of several
 * tabs following the session only the one holding the claim runs it), checks the arguments against the tool's schema in
 * the page, picks the handler (named → inline → generic fallback), turns whatever happens into an outcome Core can hand
 * to the agent, and aborts calls nobody waits for.
 */
export class ToolDispatcher {
  readonly #options: ToolDispatchOptions;
  readonly #named = new Map<string, Registration[]>();
  readonly #fallbacks: Registration[] = [];
  readonly #active = new Map<string, ActiveCall>();
  #closed = false;

  constructor(options: ToolDispatchOptions) {
    this.#options = options;
  }

  /** Registers a handler for one tool name, or the generic fallback when `name` is undefined. The newest wins. */
  register(name: string | undefined, handler: ToolHandler): () => void {
    const registration: Registration = { handler };
    const list = name === undefined ? this.#fallbacks : this.#namedList(name);
    list.push(registration);
    return () => {
      const index = list.indexOf(registration);
      if (index >= 0) list.splice(index, 1);
    };
  }

  /**
   * A call Core requested (an event, or one still pending at resume). Runs nothing when this page already runs or ran
   * it; a call requested again after this page lost the claim is tried again.
   */
  dispatch(call: ToolCallRequest, context: PedelecEventContext): void {
    if (this.#closed || !this.#options.ledger.take(this.#options.sessionId, call.toolRequestId)) return;
    const active: ActiveCall = { controller: new AbortController(), turnId: call.turnId, submitting: false };
    this.#active.set(call.toolRequestId, active);
    void this.#run(call, active, context);
  }

  /** Core settled the call; unless the page's answer was taken, the handler's work is no longer wanted. */
  settle(toolRequestId: string, outcome: ToolCallSettledOutcome): void {
    const active = this.#active.get(toolRequestId);
    if (active === undefined) return;
    this.#stop(toolRequestId, active, "finish");
    if (outcome === "answered") {
      if (!active.submitting) active.controller.abort(new DOMException("The tool call was answered", "AbortError"));
      return;
    }
    active.controller.abort(new PedelecError(SETTLED_ABORT_CODES[outcome], `The tool call was settled as ${outcome}`));
  }

  abortTurn(turnId: string, reason: PedelecError): void {
    for (const [toolRequestId, active] of [...this.#active]) {
      if (active.turnId !== turnId) continue;
      this.#stop(toolRequestId, active, "finish");
      active.controller.abort(reason);
    }
  }

  /**
   * Stops every call. `"release"` when the link broke (Core requests the calls again once the extension dropped this
   * page's claims, and this page may take them then), `"finish"` when the session is over.
   */
  abortAll(reason: PedelecError, fate: AbortFate): void {
    if (fate === "finish") this.#closed = true;
    for (const [toolRequestId, active] of [...this.#active]) {
      this.#stop(toolRequestId, active, fate);
      active.controller.abort(reason);
    }
  }

  #stop(toolRequestId: string, active: ActiveCall, fate: AbortFate): void {
    if (this.#active.get(toolRequestId) !== active) return;
    this.#active.delete(toolRequestId);
    if (fate === "finish") this.#options.ledger.finish(this.#options.sessionId, toolRequestId);
    else this.#options.ledger.release(this.#options.sessionId, toolRequestId);
  }

  #namedList(name: string): Registration[] {
    let list = this.#named.get(name);
    if (list === undefined) {
      list = [];
      this.#named.set(name, list);
    }
    return list;
  }

  #selectHandler(toolName: string): ToolHandler | undefined {
    return this.#named.get(toolName)?.at(-1)?.handler ?? this.#options.inlineHandlers.get(toolName) ?? this.#fallbacks.at(-1)?.handler;
  }

  async #run(call: ToolCallRequest, active: ActiveCall, context: PedelecEventContext): Promise<void> {
    const signal = active.controller.signal;
    if (!(await this.#claim(call, active))) return;
    const outcome = await this.#answer(call, signal, context);
    if (signal.aborted) return;
    active.submitting = true;
    try {
      await this.#options.submit(call.toolRequestId, outcome);
    } catch (error) {
      // Once the session is over nobody listens; any other failure, late refusals included, is the app's to know.
      if (this.#closed) return;
      const cause = PedelecError.from(error, "SUBMIT_TOOL_RESULT_FAILED");
      this.#options.reportFailure(
        new PedelecError("SUBMIT_TOOL_RESULT_FAILED", `The result of tool "${call.toolName}" could not be delivered`, {
          toolRequestId: call.toolRequestId,
          cause: cause.toWire(),
        }),
        call,
      );
    } finally {
      // A refused or undelivered result is not retried by running the handler again.
      this.#stop(call.toolRequestId, active, "finish");
    }
  }

  /** True when this page holds the call and should run it. */
  async #claim(call: ToolCallRequest, active: ActiveCall): Promise<boolean> {
    const signal = active.controller.signal;
    let claimed: boolean;
    try {
      claimed = await this.#options.claim(call.toolRequestId);
    } catch (error) {
      // Whoever aborted the call (a settle, the turn's end, a lost link) already decided what becomes of it.
      if (signal.aborted) return false;
      const failure = PedelecError.from(error, "SDK_TRANSPORT_ERROR");
      if (STALE_CLAIM_CODES.has(failure.code)) {
        this.#stop(call.toolRequestId, active, "finish");
        return false;
      }
      this.#stop(call.toolRequestId, active, "release");
      this.#options.reportFailure(
        new PedelecError("SUBMIT_TOOL_RESULT_FAILED", `The call of tool "${call.toolName}" could not be taken`, {
          toolRequestId: call.toolRequestId,
          cause: failure.toWire(),
        }),
        call,
      );
      return false;
    }
    if (signal.aborted) return false;
    if (!claimed) {
      // Another page runs it. Should that page go away unanswered, Core requests the call again and this page tries anew.
      this.#stop(call.toolRequestId, active, "release");
      return false;
    }
    return true;
  }

  async #answer(call: ToolCallRequest, signal: AbortSignal, context: PedelecEventContext): Promise<ToolResultOutcome> {
    const checked = await this.#checkArgs(call);
    if (!checked.ok) return checked.outcome;
    // A call settled while an async check ran is not answered (see #run); its handler does not start either.
    if (signal.aborted) return failure("TURN_CANCELLED", `The call of tool "${call.toolName}" is no longer wanted`);
    const handler = this.#selectHandler(call.toolName);
    if (handler === undefined) {
      return failure("TOOL_HANDLER_NOT_FOUND", `The page has no handler for tool "${call.toolName}"`);
    }
    const { messageId: _messageId, ...eventContext } = context;
    const handlerContext: ToolHandlerContext = {
      ...eventContext,
      sessionId: this.#options.sessionId,
      toolName: call.toolName,
      toolRequestId: call.toolRequestId,
      turnId: call.turnId,
      signal,
    };
    let value: unknown;
    try {
      value = await handler(checked.args, handlerContext);
    } catch (error) {
      return failure("TOOL_HANDLER_ERROR", `Tool "${call.toolName}" failed: ${describeThrown(error)}`);
    }
    const json = toJsonResult(value);
    if (!json.ok) return failure("TOOL_RESULT_INVALID", `Tool "${call.toolName}" returned a non-JSON value: ${json.reason}`);
    return { ok: true, result: json.value };
  }

  /** The arguments the handler gets (a Standard Schema's output), or the outcome that answers an invalid call. */
  async #checkArgs(call: ToolCallRequest): Promise<{ ok: true; args: unknown } | { ok: false; outcome: ToolResultOutcome }> {
    const validator = this.#options.argsValidators?.get(call.toolName);
    if (validator === undefined) return { ok: true, args: call.args };
    let check: ArgsCheck;
    try {
      check = await validator(call.args);
    } catch (error) {
      // The schema's own code threw (a refinement, say): the app's failure, like a throwing handler.
      return {
        ok: false,
        outcome: failure("TOOL_HANDLER_ERROR", `Checking the arguments of tool "${call.toolName}" failed: ${describeThrown(error)}`),
      };
    }
    if (check.ok) return { ok: true, args: check.value };
    return {
      ok: false,
      outcome: failure("TOOL_ARGS_INVALID", `arguments for ${call.toolName} do not match its schema: ${check.message}`, check.details),
    };
  }
}

function failure(code: ErrorCode, message: string, details?: unknown): ToolResultOutcome {
  return { ok: false, error: details === undefined ? { code, message } : { code, message, details } };
}

function describeThrown(error: unknown): string {
  if (error instanceof Error) return error.message;
  try {
    return String(error);
  } catch {
    return "a value that cannot be described";
  }
}
