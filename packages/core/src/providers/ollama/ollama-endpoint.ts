import { clipText } from "@pedelec/protocol/issue-summary";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { z } from "zod";

/** Where Ollama listens by default. */
export const DEFAULT_OLLAMA_BASE_URL = "http://127.0.0.1:11434";

/** The endpoint settings a session snapshots: where the Ollama-compatible API is and the key it is called with. */
export interface OllamaEndpoint {
  baseUrl: string;
  apiKey: string;
}

/** `GET /api/tags`: the installed models (Ollama API docs; extra fields pass). */
const tagsSchema = z.looseObject({
  models: z.array(z.looseObject({ name: z.string(), model: z.string().optional() })),
});

/** How Ollama words a failure: `{"error": "..."}` (Ollama API docs). */
export const ollamaErrorBodySchema = z.object({ error: z.string() });

/**
 * A non-2xx answer of an Ollama-compatible endpoint as a coded error: 401/403 → OLLAMA_AUTH_FAILED, a 404 whose error
 * names a missing model → OLLAMA_MODEL_NOT_FOUND, anything else → OLLAMA_REQUEST_FAILED, with what the server said.
 */
export function ollamaHttpError(status: number, body: string, url: URL, model?: string): PedelecError {
  let errorText: string | undefined;
  try {
    const parsed = ollamaErrorBodySchema.safeParse(JSON.parse(body));
    if (parsed.success) errorText = parsed.data.error;
  } catch {
    // Not JSON: the raw text says what happened (a proxy's page, Ollama's "404 page not found").
  }
  const said = clipText(errorText ?? body.trim(), 2000);
  const details = { status, error: said };
  if (status === 401 || status === 403) {
    return new PedelecError(
      "OLLAMA_AUTH_FAILED",
      `Ollama at ${url.href} refused the API key (${status}${said ? `: ${said}` : ""}); check ollama.apiKey in Pedelec's settings`,
      details,
    );
  }
  if (model !== undefined && status === 404 && errorText !== undefined && /model\b.*\bnot found/i.test(errorText)) {
    return new PedelecError(
      "OLLAMA_MODEL_NOT_FOUND",
      `the model "${model}" is not available at ${url.origin}: ${said}; run \`ollama pull ${model}\``,
      details,
    );
  }
  return new PedelecError("OLLAMA_REQUEST_FAILED", `Ollama at ${url.href} answered ${status}${said ? `: ${said}` : ""}`, details);
}

/** The base URL as a URL, or OLLAMA_BASE_URL_INVALID: only http(s), no credentials, query or fragment. */
export function parseBaseUrl(baseUrl: string): URL {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new PedelecError(
      "OLLAMA_BASE_URL_INVALID",
      `ollama.baseUrl ${JSON.stringify(baseUrl)} is not a URL; use something like ${DEFAULT_OLLAMA_BASE_URL}`,
    );
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new PedelecError("OLLAMA_BASE_URL_INVALID", `ollama.baseUrl must use http or https, not ${url.protocol.replace(/:$/, "")}`);
  }
  // Never echoed: credentials in the address would end up in error messages; the key travels only in a header.
  if (url.username !== "" || url.password !== "")
    throw new PedelecError("OLLAMA_BASE_URL_INVALID", "ollama.baseUrl may not hold a user name or password");
  if (url.search !== "" || url.hash !== "") throw new PedelecError("OLLAMA_BASE_URL_INVALID", "ollama.baseUrl may not have a query or fragment");
  return url;
}

/** The endpoint is usable at all: a key is set and the base URL is well-formed. Throws the coded reason otherwise. */
export function requireEndpointSettings(endpoint: OllamaEndpoint): void {
  if (endpoint.apiKey.trim() === "") {
    throw new PedelecError(
      "OLLAMA_API_KEY_REQUIRED",
      "Ollama needs an API key: run `pedelec config set ollama.apiKey -` and type or pipe it in, or set it in the control panel (any non-empty value, such as `ollama`, for a local server)",
    );
  }
  parseBaseUrl(endpoint.baseUrl);
}

/**
 * Asks the endpoint which models it has (`GET /api/tags`, with the key as a Bearer token). Coded failures:
 * OLLAMA_UNAVAILABLE (nothing answers), OLLAMA_AUTH_FAILED (401/403), OLLAMA_REQUEST_FAILED (another status),
 * OLLAMA_RESPONSE_INVALID (not the expected JSON).
 */
export async function listInstalledModels(endpoint: OllamaEndpoint, signal: AbortSignal): Promise<string[]> {
  requireEndpointSettings(endpoint);
  const url = new URL("api/tags", withTrailingSlash(parseBaseUrl(endpoint.baseUrl)));
  let response: Response;
  try {
    response = await fetch(url, { headers: { authorization: `Bearer ${endpoint.apiKey}` }, signal });
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).message;
    throw new PedelecError("OLLAMA_UNAVAILABLE", `nothing answers at ${endpoint.baseUrl} (${cause}); is Ollama running?`);
  }
  const body = await response.text().catch(() => "");
  // An error page is only quoted, so its first 64 KiB say all there is to say.
  if (!response.ok) throw ollamaHttpError(response.status, body.slice(0, 64 * 1024), url);
  let parsed: z.infer<typeof tagsSchema>;
  try {
    parsed = tagsSchema.parse(JSON.parse(body));
  } catch {
    throw new PedelecError("OLLAMA_RESPONSE_INVALID", `${endpoint.baseUrl}/api/tags did not answer with Ollama's model list`);
  }
  return parsed.models.map((model) => model.name);
}

/** Ollama names a model `name:tag`; `qwen3` means `qwen3:latest`. */
export function isModelInstalled(model: string, installed: readonly string[]): boolean {
  const wanted = model.includes(":") ? model : `${model}:latest`;
  return installed.some((name) => name === model || name === wanted);
}

/** Throws OLLAMA_MODEL_NOT_FOUND unless the endpoint has `model`. */
export async function requireModel(endpoint: OllamaEndpoint, model: string, signal: AbortSignal): Promise<void> {
  const installed = await listInstalledModels(endpoint, signal);
  if (!isModelInstalled(model, installed)) {
    throw new PedelecError(
      "OLLAMA_MODEL_NOT_FOUND",
      `model ${model} is not installed at ${endpoint.baseUrl}; run \`ollama pull ${model}\`${installed.length > 0 ? ` (installed: ${installed.slice(0, 10).join(", ")})` : ""}`,
    );
  }
}

function withTrailingSlash(url: URL): URL {
  return url.pathname.endsWith("/") ? url : new URL(`${url.href}/`);
}
