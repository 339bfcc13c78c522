import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { clipText, summarizeIssues } from "@pedelec/protocol/issue-summary";
import { LineTooLongError, ndjsonLines } from "./ndjson-lines.js";
import { ollamaErrorBodySchema, ollamaHttpError } from "@pedelec/core/providers/ollama/ollama-endpoint";
import { ollamaChatChunkSchema, type OllamaChatRequest, type ReceivedToolCall } from "./ollama-chat-schema.js";
import { MAX_TURN_ANSWER_BYTES, MAX_TURN_TEXT_BYTES, turnLimitExceeded, type TurnBudget } from "./turn-limits.js";

/** How long the agent waits for the next byte from Ollama (connecting, the headers, or the next line). */
export const DEFAULT_OLLAMA_IDLE_TIMEOUT_MS = 120_000;
/** Longest line of a chat stream; a chunk is a few hundred bytes, a tool call with large arguments far less than this. */
const MAX_CHUNK_LINE_LENGTH = 16 * 1024 * 1024;
/** How much of an error answer's body the agent reads. */
const MAX_ERROR_BODY_BYTES = 64 * 1024;

export interface ChatRoundOptions {
  baseUrl: URL;
  apiKey: string;
  request: OllamaChatRequest;
  idleTimeoutMs?: number;
  /** Aborting stops the round; a PedelecError reason (the turn's deadline) is what the round then fails with. */
  signal?: AbortSignal;
  /** The turn's totals: the answer's bytes and text count against MAX_TURN_ANSWER_BYTES and MAX_TURN_TEXT_BYTES. */
  budget?: TurnBudget;
  /** Tool calls kept whole; the ones past it are only counted (toolCallCount), so a flood of calls costs no memory. */
  keepToolCalls?: number;
  /** Each non-empty content piece, as it arrives. */
  onContent(delta: string): void;
}

/** What one streamed answer held. */
export interface ChatRoundResult {
  content: string;
  /** The first `keepToolCalls` calls, in order. */
  toolCalls: ReceivedToolCall[];
  /** Every call the answer made, kept or not. */
  toolCallCount: number;
  promptTokens: number;
  outputTokens: number;
  doneReason: string | undefined;
}

/** `<base>/api/chat`, keeping a path prefix the base URL may have (a proxy's mount point). */
export function chatUrlOf(baseUrl: URL): URL {
  return new URL(`${baseUrl.pathname.replace(/\/+$/, "")}/api/chat`, baseUrl);
}

/**
 * One round: POSTs the request with `stream: true` and reads Ollama's NDJSON answer line by line, handing content on
 * as it comes. Every way it can go wrong ends in a PedelecError with an OLLAMA_* code; the API key is never in one.
 */
export async function streamChatRound(options: ChatRoundOptions): Promise<ChatRoundResult> {
  const url = chatUrlOf(options.baseUrl);
  const idleTimeoutMs = options.idleTimeoutMs ?? DEFAULT_OLLAMA_IDLE_TIMEOUT_MS;
  const controller = new AbortController();
  let idleExpired = false;
  let idleTimer: NodeJS.Timeout | undefined;
  const touch = (): void => {
    clearTimeout(idleTimer);
    idleTimer = setTimeout(() => {
      idleExpired = true;
      controller.abort();
    }, idleTimeoutMs);
  };
  const onOuterAbort = (): void => controller.abort(options.signal?.reason);
  options.signal?.addEventListener("abort", onOuterAbort, { once: true });
  const idleError = (): PedelecError =>
    new PedelecError(
      "OLLAMA_UNAVAILABLE",
      `Ollama at ${url.href} sent nothing for ${Math.round(idleTimeoutMs / 1000)} s; is it overloaded or stuck?`,
    );

  try {
    touch();
    let response: Response;
    try {
      response = await fetch(url, {
        method: "POST",
        headers: { "Content-Type": "application/json", Accept: "application/x-ndjson", Authorization: `Bearer ${options.apiKey}` },
        body: JSON.stringify(options.request),
        signal: controller.signal,
      });
    } catch (error) {
      if (idleExpired) throw idleError();
      if (options.signal?.aborted) throw abortReason(options.signal);
      throw new PedelecError("OLLAMA_UNAVAILABLE", `cannot reach Ollama at ${url.href}: ${causeOf(error)}`);
    }
    touch();
    if (!response.ok) throw await errorOfResponse(response, url, options.request.model);
    if (response.body === null) throw new PedelecError("OLLAMA_RESPONSE_INVALID", `Ollama at ${url.href} answered without a body`);

    const body = response.body;
    const budget = options.budget;
    async function* touchedChunks(): AsyncGenerator<Uint8Array> {
      for await (const chunk of body) {
        touch();
        if (budget !== undefined) {
          budget.answerBytes += chunk.byteLength;
          if (budget.answerBytes > MAX_TURN_ANSWER_BYTES) {
            throw turnLimitExceeded(
              "answer-bytes",
              `the endpoint's answers in this turn passed ${MAX_TURN_ANSWER_BYTES} bytes, the most one turn may receive; the turn was stopped`,
            );
          }
        }
        yield chunk;
      }
    }
    const keepToolCalls = options.keepToolCalls ?? Number.POSITIVE_INFINITY;
    const result: ChatRoundResult = { content: "", toolCalls: [], toolCallCount: 0, promptTokens: 0, outputTokens: 0, doneReason: undefined };
    let done = false;
    try {
      for await (const line of ndjsonLines(touchedChunks(), MAX_CHUNK_LINE_LENGTH)) {
        const chunk = parseChunk(line);
        const message = chunk.message;
        if (message?.content) {
          if (budget !== undefined) {
            budget.textBytes += Buffer.byteLength(message.content);
            if (budget.textBytes > MAX_TURN_TEXT_BYTES) {
              throw turnLimitExceeded(
                "text-bytes",
                `the model's text in this turn passed ${MAX_TURN_TEXT_BYTES} bytes, the most one turn may stream; the turn was stopped`,
              );
            }
          }
          result.content += message.content;
          options.onContent(message.content);
        }
        for (const call of message?.tool_calls ?? []) {
          result.toolCallCount += 1;
          if (result.toolCalls.length < keepToolCalls) result.toolCalls.push(call);
        }
        if (chunk.done) {
          done = true;
          result.doneReason = chunk.done_reason ?? result.doneReason;
          result.promptTokens = chunk.prompt_eval_count ?? result.promptTokens;
          result.outputTokens = chunk.eval_count ?? result.outputTokens;
        }
      }
    } catch (error) {
      if (error instanceof PedelecError) throw error;
      if (idleExpired) throw idleError();
      if (options.signal?.aborted) throw abortReason(options.signal);
      if (error instanceof LineTooLongError) throw new PedelecError("OLLAMA_RESPONSE_INVALID", `Ollama's answer is not NDJSON: ${error.message}`);
      throw new PedelecError("OLLAMA_RESPONSE_INVALID", `the stream ended early: the connection to ${url.href} broke (${causeOf(error)})`);
    }
    if (!done)
      throw new PedelecError("OLLAMA_RESPONSE_INVALID", `the stream ended early: Ollama at ${url.href} closed it without the final done line`);
    return result;
  } finally {
    clearTimeout(idleTimer);
    options.signal?.removeEventListener("abort", onOuterAbort);
    // A round stopped early (a limit, a bad line) drops the request, so the endpoint stops sending; after a whole
    // answer this changes nothing.
    controller.abort();
  }
}

function parseChunk(line: string) {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    throw new PedelecError("OLLAMA_RESPONSE_INVALID", `Ollama sent a line that is not JSON: ${clipText(line, 200)}`);
  }
  const failure = ollamaErrorBodySchema.safeParse(value);
  if (failure.success) throw new PedelecError("OLLAMA_REQUEST_FAILED", `Ollama failed while answering: ${clipText(failure.data.error, 2000)}`);
  const parsed = ollamaChatChunkSchema.safeParse(value);
  if (!parsed.success) {
    const summary = summarizeIssues(parsed.error.issues);
    throw new PedelecError("OLLAMA_RESPONSE_INVALID", `Ollama sent a line that is not a chat chunk: ${summary.message}`, summary.details);
  }
  return parsed.data;
}

async function errorOfResponse(response: Response, url: URL, model: string): Promise<PedelecError> {
  return ollamaHttpError(response.status, await readCapped(response), url, model);
}

async function readCapped(response: Response): Promise<string> {
  if (response.body === null) return "";
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for await (const chunk of response.body) {
      chunks.push(chunk);
      total += chunk.byteLength;
      if (total >= MAX_ERROR_BODY_BYTES) break;
    }
  } catch {
    // Whatever arrived is enough to describe the failure.
  }
  return new TextDecoder().decode(Buffer.concat(chunks).subarray(0, MAX_ERROR_BODY_BYTES));
}

function causeOf(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown; message?: unknown } } | null)?.cause;
  if (cause && typeof cause.code === "string") return typeof cause.message === "string" ? `${cause.code} ${cause.message}` : cause.code;
  if (cause && typeof cause.message === "string") return cause.message;
  return error instanceof Error ? error.message : String(error);
}

/** Why the round was stopped from outside: the reason it was given when that is a PedelecError, else a cancellation. */
function abortReason(signal: AbortSignal): PedelecError {
  return signal.reason instanceof PedelecError ? signal.reason : new PedelecError("TURN_CANCELLED", "the turn was cancelled");
}
