import { PedelecError } from "@pedelec/protocol/pedelec-error";

/**
 * The bounds of one turn of `pedelec-agent`, whatever the endpoint sends. The model is not trusted to be reasonable:
 * a hostile or broken Ollama-compatible endpoint may answer with thousands of tool calls, huge arguments, or a stream
 * that never ends. Each bound is far above what a real model does in a turn, and each one that is hit is said to the
 * model (refused calls and writes become tool errors it reads) or ends the turn with AGENT_TURN_LIMIT_EXCEEDED.
 * See docs/architecture/providers.md ("Limits of a turn").
 */

/**
 * Tool calls of one model answer that run; the others are refused with AGENT_TOOL_CALLS_EXCEEDED tool errors. Models
 * batch a handful of parallel calls at most; 16 leaves room for a wide fan-out (read 16 files at once).
 */
export const MAX_TOOL_CALLS_PER_ANSWER = 16;

/**
 * Tool calls of one turn that run, across all its rounds; past it every call is refused (the round limit then ends a
 * model that keeps calling). 128 is more than five times what a 24-round turn of a few calls each uses.
 */
export const MAX_TOOL_CALLS_PER_TURN = 128;

/**
 * Refused calls of one answer that each get their own tool error and stay in the conversation (with their arguments
 * dropped); the rest are only counted, in those errors' message, so 5,000 refused calls cost 16 short messages.
 */
export const MAX_REFUSED_CALLS_ANSWERED = 16;

/**
 * Bytes `workspace_write_file` may write in one turn (its content, summed over the writes that ran); a write that would
 * pass it is refused with AGENT_WRITE_BUDGET_EXCEEDED. Four of the largest single writes (8 MiB each). Scripts write
 * through the script runtime, which has bounds of its own.
 */
export const MAX_TURN_WRITE_BYTES = 32 * 1024 * 1024;

/**
 * Bytes of the endpoint's answers (the NDJSON bodies of every `/api/chat` of the turn, as received) before the turn
 * fails with AGENT_TURN_LIMIT_EXCEEDED (`details.limit: "answer-bytes"`). Room for the write budget twice over plus
 * Ollama's per-line framing; it also stops an endpoint that streams empty or thinking-only chunks forever.
 */
export const MAX_TURN_ANSWER_BYTES = 64 * 1024 * 1024;

/**
 * Bytes of answer text (what the user reads) one turn may stream before it fails with AGENT_TURN_LIMIT_EXCEEDED
 * (`details.limit: "text-bytes"`): about a million tokens, far past any model's answer, and it keeps every
 * message-completed line well under the 16 MiB line Core reads.
 */
export const MAX_TURN_TEXT_BYTES = 4 * 1024 * 1024;

/**
 * How long one turn may take, rounds, tool calls and scripts included, before it fails with AGENT_TURN_LIMIT_EXCEEDED
 * (`details.limit: "duration"`); `PEDELEC_AGENT_MAX_TURN_MS` overrides it. Core's model response timeout stops a
 * silent model much earlier; this stops one that streams slowly forever. Thirty minutes is several full-length script
 * runs (10 min each at most) plus a long answer on slow hardware.
 */
export const DEFAULT_MAX_TURN_MS = 30 * 60_000;

/** Overrides DEFAULT_MAX_TURN_MS (milliseconds), for slow hardware or quick tests. */
export const MAX_TURN_MS_ENV = "PEDELEC_AGENT_MAX_TURN_MS";

/**
 * Text deltas are joined so that at most one goes to the page per this many milliseconds (ten a second, smooth to the
 * eye); the first piece of an answer goes at once.
 */
export const TEXT_DELTA_INTERVAL_MS = 100;

/** A joined text delta is sent early once it holds this many characters, so no one event grows large. */
export const MAX_TEXT_DELTA_CHARACTERS = 256 * 1024;

/**
 * Text deltas one turn sends; past it the rest of each answer reaches the page only in its message-completed event.
 * At one per TEXT_DELTA_INTERVAL_MS that is five minutes of continuous streaming.
 */
export const MAX_TURN_TEXT_DELTAS = 3_000;

/**
 * The most events one turn sends to the page: the text deltas, a started and a finished activity per call that ran,
 * and per round at most one refusal activity and one message-completed, plus conversation-started and the turn's end.
 */
export function maxTurnEvents(maxToolRounds: number): number {
  return MAX_TURN_TEXT_DELTAS + 2 * MAX_TOOL_CALLS_PER_TURN + 2 * maxToolRounds + 2;
}

/** A turn bound that was hit; the turn fails with it. */
export function turnLimitExceeded(limit: "answer-bytes" | "text-bytes" | "duration", message: string): PedelecError {
  return new PedelecError("AGENT_TURN_LIMIT_EXCEEDED", message, { limit });
}

/** The turn's running totals against the bounds above. */
export class TurnBudget {
  callsRun = 0;
  bytesWritten = 0;
  answerBytes = 0;
  textBytes = 0;

  /** How many calls of an answer may run now. */
  runnableCalls(callsInAnswer: number): number {
    return Math.max(0, Math.min(callsInAnswer, MAX_TOOL_CALLS_PER_ANSWER, MAX_TOOL_CALLS_PER_TURN - this.callsRun));
  }

  /** Takes `bytes` of the write budget, or refuses the write with AGENT_WRITE_BUDGET_EXCEEDED. */
  takeWrite(bytes: number): void {
    if (this.bytesWritten + bytes > MAX_TURN_WRITE_BYTES) {
      throw new PedelecError(
        "AGENT_WRITE_BUDGET_EXCEEDED",
        `refused: this write of ${bytes} bytes would pass the ${MAX_TURN_WRITE_BYTES} bytes one turn may write ` +
          `(${this.bytesWritten} written so far); finish the turn and write the rest in a later one, or generate large files with run_script`,
        { bytes, bytesWritten: this.bytesWritten, maxTurnWriteBytes: MAX_TURN_WRITE_BYTES },
      );
    }
    this.bytesWritten += bytes;
  }

  /** Gives back bytes of a write that did not happen. */
  returnWrite(bytes: number): void {
    this.bytesWritten -= bytes;
  }
}

/**
 * Aborts at the turn's deadline with AGENT_TURN_LIMIT_EXCEEDED. The timer does not hold the process; `clear()` when the
 * turn is over.
 */
export function turnDeadline(maxTurnMs: number): { signal: AbortSignal; clear(): void } {
  const controller = new AbortController();
  const timer = setTimeout(() => {
    controller.abort(
      turnLimitExceeded("duration", `the turn ran for ${Math.round(maxTurnMs / 1000)} s, the most one turn may take, and was stopped`),
    );
  }, maxTurnMs);
  timer.unref();
  return { signal: controller.signal, clear: () => clearTimeout(timer) };
}
