/** A request the stand-in received; `state` changes while the answer streams. */
export interface RecordedRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  /** The parsed JSON body, the raw text when it is not JSON, or null when empty. */
  body: any;
  state: "open" | "finished" | "aborted";
}

export interface OllamaServerOptions {
  port?: number;
  /** The models it has (default ["qwen3:latest"]); a name without a tag means ":latest". */
  models?: string[];
  /** When set, every request must carry `Authorization: Bearer <apiKey>`, else 401. */
  apiKey?: string;
}

export interface RunningOllamaServer {
  url: string;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

export function startOllamaServer(options?: OllamaServerOptions): Promise<RunningOllamaServer>;
