/** Token counts a reply reports in the wire format's usage block. */
export interface TokenCounts {
  inputTokens: number;
  outputTokens: number;
  /** Input tokens read from the provider's prompt cache (part of `inputTokens` or beside it, as each wire format counts). */
  cachedInputTokens?: number;
}

/** One scripted answer of a model server, written in whichever wire format the server speaks. */
export type ModelReply =
  /** Text in several deltas, then the end of the turn. */
  | { kind: "text"; deltas: string[]; usage?: TokenCounts }
  /** A call of the CLI's own shell tool (claude `Bash`, codex `exec_command`, opencode `bash`) running `command`. */
  | { kind: "shell"; command: string; usage?: TokenCounts }
  /**
   * A call of any other tool the request offered, by its exact name in the request's tool list; for the Responses
   * format, `namespace` names the tool namespace the function is in (codex puts each MCP server's tools in one).
   */
  | { kind: "tool"; name: string; namespace?: string; input: Record<string, unknown> }
  /** An HTTP error with the wire format's own error body. */
  | { kind: "error"; status: 401 | 403 | 429 | 500 | 503 | 529; message?: string }
  /** Accept the request and never answer it (until the server closes). */
  | { kind: "hang" }
  /** Send the headers and the opening events with these deltas, then nothing more; the connection stays open. */
  | { kind: "stall-mid-stream"; deltas: string[] }
  /** Send the opening events with these deltas, then destroy the socket. */
  | { kind: "drop-mid-stream"; deltas: string[] };

/** One model request as the server received it, with the parts tests assert on already read out of the body. */
export interface ModelRequest {
  path: string;
  method: string;
  headers: Record<string, string | string[] | undefined>;
  /** The parsed JSON body. */
  body: unknown;
  model: string | null;
  /** claude: `output_config.effort`; codex: `reasoning.effort`; chat completions: `reasoning_effort`. */
  effort: string | null;
  /** The text of the last user message (tool results and claude's `role:"system"` entries do not count). */
  userText: string;
  /** The outputs of tool calls returned in this request (not those replayed from earlier requests), as text. */
  toolResults: string[];
  /** The names of the tools the request offered. */
  toolNames: string[];
  /** Every user and assistant text of the request, in order: the history a resumed session replays. */
  transcript: { role: string; text: string }[];
  /** `"title"` only for OpenCode's title requests, which the server answers itself. */
  purpose: "turn" | "title";
  /** `performance.now()` when the body had arrived. */
  receivedAt: number;
}

/** A reply, or a function choosing one from the request it answers. */
export type ScriptedReply = ModelReply | ((request: ModelRequest) => ModelReply);

/** A running scripted model server. */
export interface ModelServer {
  /**
   * The base URL exactly as the CLI is configured with it: claude's `ANTHROPIC_BASE_URL`, codex's
   * `model_providers.*.base_url` and opencode's `options.baseURL` (the last two end in `/v1`).
   */
  readonly url: string;
  /** Every model request received, in order, title requests included. */
  readonly requests: readonly ModelRequest[];
  /** Appends replies to the queue; each request that is not a title request takes the next one. */
  script(...replies: ScriptedReply[]): void;
  /** Drops the replies still queued: what one test scripted and its CLI did not ask for does not reach the next. */
  dropScript(): void;
  /**
   * Resolves with the turn requests received so far once `count` requests with purpose `"turn"` have arrived; rejects
   * after `timeoutMs` (default 30 s) saying how many did.
   */
  waitForRequests(count: number, timeoutMs?: number): Promise<readonly ModelRequest[]>;
  /** Stops listening and destroys every open connection, hung and stalled ones included. */
  close(): Promise<void>;
}
