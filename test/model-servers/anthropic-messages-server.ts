import type { ModelServer } from "./model-server-types.js";
import { anthropicErrorBody, anthropicMessage, anthropicMessagesStream } from "./anthropic-messages-reply.js";
import { readAnthropicMessagesRequest } from "./anthropic-messages-request.js";
import { startScriptedModelServer } from "./scripted-model-server.js";
import type { WireFormat } from "./wire-format.js";

/** The Anthropic Messages API as Claude Code uses it. */
export const ANTHROPIC_MESSAGES: WireFormat = {
  basePath: "",
  modelPath: "/v1/messages",
  // Some claude versions probe the base URL with HEAD before the first request.
  otherRequestStatus: (method) => (method === "HEAD" ? 200 : undefined),
  readRequest: readAnthropicMessagesRequest,
  shellCall: (command) => ({ name: "Bash", input: { command, description: "Run the scripted command" } }),
  wantsStream: (body) => (body as { stream?: unknown }).stream === true,
  stream: anthropicMessagesStream,
  message: anthropicMessage,
  errorBody: anthropicErrorBody,
};

/**
 * Starts a scripted Anthropic Messages server for claude: `POST <url>/v1/messages?beta=true` streamed as SSE (or one
 * Message for `stream:false`), `HEAD <url>` 200. Its `url` is the value of `ANTHROPIC_BASE_URL`.
 */
export function startAnthropicMessagesServer(): Promise<ModelServer> {
  return startScriptedModelServer(ANTHROPIC_MESSAGES);
}
