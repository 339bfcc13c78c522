import type { ModelServer } from "./model-server-types.js";
import { openAiErrorBody } from "./openai-error-body.js";
import { openAiResponsesStream } from "./openai-responses-reply.js";
import { readOpenAiResponsesRequest } from "./openai-responses-request.js";
import { startScriptedModelServer } from "./scripted-model-server.js";
import type { WireFormat } from "./wire-format.js";

/** The OpenAI Responses API as Codex uses it (`wire_api = "responses"`). */
export const OPENAI_RESPONSES: WireFormat = {
  basePath: "/v1",
  modelPath: "/v1/responses",
  readRequest: readOpenAiResponsesRequest,
  shellCall: (command) => ({ name: "exec_command", input: { cmd: command, yield_time_ms: 10000 } }),
  wantsStream: () => true,
  stream: openAiResponsesStream,
  errorBody: openAiErrorBody,
};

/**
 * Starts a scripted Responses server for codex: `POST <url>/responses` streamed as SSE with `event:` and `data:`
 * lines. Its `url` is the provider's `base_url` and ends in `/v1`.
 */
export function startOpenAiResponsesServer(): Promise<ModelServer> {
  return startScriptedModelServer(OPENAI_RESPONSES);
}
