import type { ServerResponse } from "node:http";
import type { ModelReply, TokenCounts } from "./model-server-types.js";
import { sseFrames } from "./sse-frames.js";
import type { ContentReply, ReplyContext, WireFormat } from "./wire-format.js";

/** The usage a reply reports when its script gives none. */
export const DEFAULT_USAGE: TokenCounts = { inputTokens: 100, outputTokens: 10, cachedInputTokens: 0 };

function contentOf(reply: ModelReply, format: WireFormat): ContentReply | undefined {
  switch (reply.kind) {
    case "text":
      return { kind: "text", deltas: reply.deltas, usage: reply.usage ?? DEFAULT_USAGE };
    case "shell":
      return { kind: "tool-call", ...format.shellCall(reply.command), usage: reply.usage ?? DEFAULT_USAGE };
    case "tool":
      return {
        kind: "tool-call",
        name: reply.name,
        ...(reply.namespace ? { namespace: reply.namespace } : {}),
        input: reply.input,
        usage: DEFAULT_USAGE,
      };
    case "stall-mid-stream":
    case "drop-mid-stream":
      return { kind: "text", deltas: reply.deltas, usage: DEFAULT_USAGE };
    default:
      return undefined;
  }
}

function writeJson(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { "content-type": "application/json" });
  response.end(JSON.stringify(body));
}

/** Writes one reply to the response, in the format's framing; `hang`, stalls and drops leave or break it as they say. */
export function writeReply(response: ServerResponse, reply: ModelReply, format: WireFormat, context: ReplyContext): void {
  if (reply.kind === "hang") return;
  if (reply.kind === "error") {
    writeJson(response, reply.status, format.errorBody(reply.status, reply.message));
    return;
  }
  const content = contentOf(reply, format);
  if (content === undefined) throw new Error(`unknown scripted reply ${JSON.stringify(reply)}`);
  const streamed = format.wantsStream(context.request.body) || format.message === undefined;
  const cut = reply.kind === "stall-mid-stream" || reply.kind === "drop-mid-stream";
  if (!streamed) {
    if (!cut) {
      writeJson(response, 200, format.message?.(content, context));
      return;
    }
    response.writeHead(200, { "content-type": "application/json" });
    response.flushHeaders();
    if (reply.kind === "drop-mid-stream") response.socket?.destroy();
    return;
  }
  const answer = format.stream(content, context);
  response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
  if (!cut) {
    response.end(sseFrames([...answer.opening, ...answer.closing]));
    return;
  }
  response.write(sseFrames(answer.opening), () => {
    if (reply.kind === "drop-mid-stream") response.socket?.destroy();
  });
}
