import type { ErrorCode } from "@pedelec/protocol/error-codes";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import type { ToolResultOutcome } from "@pedelec/protocol/requests";
import type { SessionEventOf } from "@pedelec/protocol/session-events";
import { toJsonResult } from "./json-result.js";
import type { ToolHandler } from "./types.js";

export type ToolCallRequest = SessionEventOf<"tool-call-requested">;
export type ToolCallSettledOutcome = SessionEventOf<"tool-call-settled">["outcome"];

export interface ToolDispatchOptions {
  readonly sessionId: string;
  /** Handlers that came with the tool definitions (`defineTool({ handler })`). */
  readonly inlineHandlers: ReadonlyMap<string, ToolHandler>;
  /** Delivers an outcome to Core; rejects when the delivery failed. */
  submit(toolRequestId: string, outcome: ToolResultOutcome): Promise<unknown>;
  /** Called with a SUBMIT_TOOL_RESULT_FAILED error when a delivery failed. */
  reportSubmitFailure(error: PedelecError, call: ToolCallRequest): void;
}

interface ActiveCall {
  readonly controller: AbortController;
  readonly turnId: string;
  /** Set once this page's outcome is on its way to Core. */
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

/**
 * Runs the page's tool handlers for one session: picks the handler (named → inline → generic fallback),
 * turns whatever happens into an outcome Core can hand to the agent, and aborts calls nobody waits for anymore.
 */
export class ToolDispatcher {
  readonly #options: ToolDispatchOptions;
  readonly #named = new Map<string, Registration[]>();
  readonly #fallbacks: Registration[] = [];
  readonly #active = new Map<string, ActiveCall>();

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

  get activeCount(): number {
    return this.#active.size;
  }

  dispatch(call: ToolCallRequest): void {
    // A replayed request for a call already running must not run the handler twice.
    if (this.#active.has(call.toolRequestId)) return;
    const active: ActiveCall = { controller: new AbortController(), turnId: call.turnId, submitting: false };
    this.#active.set(call.toolRequestId, active);
    void this.#run(call, active);
  }

  /** Core settled the call; unless the page's answer was taken, the handler's work is no longer wanted. */
  settle(toolRequestId: string, outcome: ToolCallSettledOutcome): void {
    const active = this.#active.get(toolRequestId);
    if (active === undefined) return;
    this.#active.delete(toolRequestId);
    if (outcome === "answered") {
      // Answered before this page submitted: another page of the same session took the call.
      if (!active.submitting) active.controller.abort(new DOMException("Another page answered the tool call", "AbortError"));
      return;
    }
    active.controller.abort(new PedelecError(SETTLED_ABORT_CODES[outcome], `The tool call was settled as ${outcome}`));
  }

  abortTurn(turnId: string, reason: PedelecError): void {
    for (const [toolRequestId, active] of this.#active) {
      if (active.turnId !== turnId) continue;
      this.#active.delete(toolRequestId);
      active.controller.abort(reason);
    }
  }

  abortAll(reason: PedelecError): void {
    for (const active of this.#active.values()) active.controller.abort(reason);
    this.#active.clear();
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
    return (
      this.#named.get(toolName)?.at(-1)?.handler ??
      this.#options.inlineHandlers.get(toolName) ??
      this.#fallbacks.at(-1)?.handler
    );
  }

  async #run(call: ToolCallRequest, active: ActiveCall): Promise<void> {
    const signal = active.controller.signal;
    const outcome = await this.#answer(call, signal);
    if (signal.aborted) return;
    active.submitting = true;
    try {
      await this.#options.submit(call.toolRequestId, outcome);
    } catch (error) {
      if (signal.aborted) return;
      const cause = PedelecError.from(error, "SUBMIT_TOOL_RESULT_FAILED");
      this.#options.reportSubmitFailure(
        new PedelecError("SUBMIT_TOOL_RESULT_FAILED", `The result of tool "${call.toolName}" could not be delivered`, {
          toolRequestId: call.toolRequestId,
          cause: cause.toWire(),
        }),
        call,
      );
    } finally {
      if (this.#active.get(call.toolRequestId) === active) this.#active.delete(call.toolRequestId);
    }
  }

  async #answer(call: ToolCallRequest, signal: AbortSignal): Promise<ToolResultOutcome> {
    const handler = this.#selectHandler(call.toolName);
    if (handler === undefined) {
      return failure("TOOL_HANDLER_NOT_FOUND", `The page has no handler for tool "${call.toolName}"`);
    }
    let value: unknown;
    try {
      value = await handler(call.args, {
        toolName: call.toolName,
        toolRequestId: call.toolRequestId,
        turnId: call.turnId,
        sessionId: this.#options.sessionId,
        signal,
      });
    } catch (error) {
      return failure("TOOL_HANDLER_ERROR", `Tool "${call.toolName}" failed: ${describeThrown(error)}`);
    }
    const json = toJsonResult(value);
    if (!json.ok) return failure("TOOL_RESULT_INVALID", `Tool "${call.toolName}" returned a non-JSON value: ${json.reason}`);
    return { ok: true, result: json.value };
  }
}

function failure(code: ErrorCode, message: string): ToolResultOutcome {
  return { ok: false, error: { code, message } };
}

function describeThrown(error: unknown): string {
  if (error instanceof Error) return error.message;
  try {
    return String(error);
  } catch {
    return "a value that cannot be described";
  }
}
