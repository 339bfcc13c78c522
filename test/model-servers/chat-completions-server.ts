import { chatCompletionsStream } from "./chat-completions-reply.js";
import { isOpenCodeTitleRequest, readChatCompletionsRequest } from "./chat-completions-request.js";
import type { ModelServer } from "./model-server-types.js";
import { openAiErrorBody } from "./openai-error-body.js";
import { startScriptedModelServer } from "./scripted-model-server.js";
import type { WireFormat } from "./wire-format.js";

/** OpenAI-compatible Chat Completions as OpenCode's `@ai-sdk/openai-compatible` provider uses it. */
export const CHAT_COMPLETIONS: WireFormat = {
  basePath: "/v1",
  modelPath: "/v1/chat/completions",
  readRequest: readChatCompletionsRequest,
  isTitleRequest: isOpenCodeTitleRequest,
  shellCall: (command) => ({ name: "bash", input: { command, description: "Run the scripted command" } }),
  wantsStream: () => true,
  stream: chatCompletionsStream,
  errorBody: openAiErrorBody,
};

/**
 * Starts a scripted Chat Completions server for opencode: `POST <url>/chat/completions` streamed as SSE `data:`
 * chunks. OpenCode's title requests get a short title without taking a scripted reply. Its `url` ends in `/v1`.
 */
export function startChatCompletionsServer(): Promise<ModelServer> {
  return startScriptedModelServer(CHAT_COMPLETIONS);
}
