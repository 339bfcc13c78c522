import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { clipText, summarizeIssues } from "@pedelec/protocol/issue-summary";
import { LineTooLongError, ndjsonLines } from "./ndjson-lines.js";
import { ollamaErrorBodySchema, ollamaHttpError } from "@pedelec/core/providers/ollama/ollama-endpoint";
import { ollamaChatChunkSchema, type OllamaChatRequest, type OllamaToolCall } from "./ollama-chat-schema.js";

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
  signal?: AbortSignal;
  /** Each non-empty content piece, as it arrives. */
  onContent(delta: string): void;
}

/** What one streamed answer held. */
export interface ChatRoundResult {
  content: string;
  toolCalls: OllamaToolCall[];
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
    new PedelecError("OLLAMA_UNAVAILABLE", `Ollama at ${url.href} sent nothing for ${Math.round(idleTimeoutMs / 1000)} s; is it overloaded or stuck?`);

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
      if (options.signal?.aborted) throw cancelled();
      throw new PedelecError("OLLAMA_UNAVAILABLE", `cannot reach Ollama at ${url.href}: ${causeOf(error)}`);
    }
    touch();
    if (!response.ok) throw await errorOfResponse(response, url, options.request.model);
    if (response.body === null) throw new PedelecError("OLLAMA_RESPONSE_INVALID", `Ollama at ${url.href} answered without a body`);

    const body = response.body;
    async function* touchedChunks(): AsyncGenerator<Uint8Array> {
      for await (const chunk of body) {
        touch();
        yield chunk;
      }
    }
    const result: ChatRoundResult = { content: "", toolCalls: [], promptTokens: 0, outputTokens: 0, doneReason: undefined };
    let done = false;
    try {
      for await (const line of ndjsonLines(touchedChunks(), MAX_CHUNK_LINE_LENGTH)) {
        const chunk = parseChunk(line);
        const message = chunk.message;
        if (message?.content) {
          result.content += message.content;
          options.onContent(message.content);
        }
        if (message?.tool_calls) result.toolCalls.push(...message.tool_calls);
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
      if (options.signal?.aborted) throw cancelled();
      if (error instanceof LineTooLongError) throw new PedelecError("OLLAMA_RESPONSE_INVALID", `Ollama's answer is not NDJSON: ${error.message}`);
      throw new PedelecError("OLLAMA_RESPONSE_INVALID", `the stream ended early: the connection to ${url.href} broke (${causeOf(error)})`);
    }
    if (!done) throw new PedelecError("OLLAMA_RESPONSE_INVALID", `the stream ended early: Ollama at ${url.href} closed it without the final done line`);
    return result;
  } finally {
    clearTimeout(idleTimer);
    options.signal?.removeEventListener("abort", onOuterAbort);
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

function cancelled(): PedelecError {
  return new PedelecError("TURN_CANCELLED", "the turn was cancelled");
}
