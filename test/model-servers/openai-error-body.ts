const ERRORS: Record<number, { type: string; code: string; message: string }> = {
  400: { type: "invalid_request_error", code: "invalid_request", message: "the request is not valid (scripted)" },
  401: { type: "invalid_request_error", code: "invalid_api_key", message: "invalid API key (scripted)" },
  403: { type: "invalid_request_error", code: "permission_denied", message: "the API key may not use this resource (scripted)" },
  429: { type: "requests", code: "rate_limit_exceeded", message: "rate limit reached (scripted)" },
  503: { type: "server_error", code: "service_unavailable", message: "service unavailable (scripted)" },
};

/** The OpenAI-style error body of the Responses and Chat Completions APIs: `{"error":{message,type,param,code}}`. */
export function openAiErrorBody(status: number, message: string | undefined): unknown {
  const known = ERRORS[status] ?? { type: "server_error", code: "server_error", message: "internal server error (scripted)" };
  return { error: { message: message ?? known.message, type: known.type, param: null, code: known.code } };
}
