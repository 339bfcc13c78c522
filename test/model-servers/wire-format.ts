import type { ModelRequest, TokenCounts } from "./model-server-types.js";

/** One Server-Sent Events frame: an optional `event:` line and one `data:` line. */
export interface SseEvent {
  event?: string;
  data: string;
}

/** A reply the server writes as content, with the usage block every reply carries. */
export type ContentReply =
  | { kind: "text"; deltas: string[]; usage: TokenCounts }
  | { kind: "tool-call"; name: string; namespace?: string; input: Record<string, unknown>; usage: TokenCounts };

/** A streamed answer in two parts, so a stalled or dropped stream can send only the first. */
export interface StreamedAnswer {
  /** The events up to and including the last delta. */
  opening: SseEvent[];
  /** The events that end the content, the message and the stream. */
  closing: SseEvent[];
}

/** What a reply writer knows besides the reply. */
export interface ReplyContext {
  request: ModelRequest;
  /** A new id with this prefix, unique over the server's lifetime (and across servers). */
  nextId(prefix: string): string;
}

/** The fields of a model request that only the wire format can read out of the body. */
export type RequestFields = Pick<ModelRequest, "model" | "effort" | "userText" | "toolResults" | "toolNames" | "transcript">;

/** Everything that differs between the model APIs; `scripted-model-server.ts` does the rest. */
export interface WireFormat {
  /** The path the server's URL ends in: `""` for Anthropic, `"/v1"` for the OpenAI-style APIs. */
  basePath: string;
  /** The path (without query) of the model endpoint, which only answers POST. */
  modelPath: string;
  /** A status for requests other than model requests that the CLI sends (claude's `HEAD <base>`), else undefined. */
  otherRequestStatus?(method: string, path: string): number | undefined;
  readRequest(body: unknown): RequestFields;
  /** Whether the request is OpenCode's title request, answered without the script. */
  isTitleRequest?(body: unknown): boolean;
  /** The call of the CLI's own shell tool that runs `command`. */
  shellCall(command: string): { name: string; input: Record<string, unknown> };
  /** False when the client asked for one JSON answer instead of a stream (Anthropic's `stream:false`). */
  wantsStream(body: unknown): boolean;
  stream(reply: ContentReply, context: ReplyContext): StreamedAnswer;
  /** The non-streamed answer, for formats where `wantsStream` can be false. */
  message?(reply: ContentReply, context: ReplyContext): unknown;
  /** The body of an error answer; without a scripted message, the API's own wording for that status. */
  errorBody(status: number, message: string | undefined): unknown;
}
