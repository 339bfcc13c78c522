import type { ServerResponse } from "node:http";
import type { PanelDroppedNotice, PanelEvent } from "./control-panel-wire.js";
import { SECURITY_HEADERS } from "./panel-guard.js";

export interface PanelEventStreamOptions {
  /**
   * Bytes a client may have waiting in Core's memory (written, not yet taken by the kernel). Past it, events for that
   * client are dropped and counted, and a `dropped` notice goes out once it reads again.
   */
  maxBufferedBytes: number;
  /** Streams open at once; more are refused (503). */
  maxClients: number;
  /** A comment line this often keeps idle connections (and proxies, if any) from timing out. */
  keepAliveMs: number;
  /** Strings in events longer than this are clipped: the monitor shows what happened, not whole answers. */
  maxStringLength: number;
}

export const DEFAULT_PANEL_EVENT_STREAM_OPTIONS: PanelEventStreamOptions = {
  maxBufferedBytes: 256 * 1024,
  maxClients: 16,
  keepAliveMs: 15_000,
  maxStringLength: 2_000,
};

/** One open `text/event-stream` answer. */
class StreamClient {
  #dropped = 0;

  constructor(
    readonly response: ServerResponse,
    private readonly maxBufferedBytes: number,
  ) {
    response.on("drain", () => this.#sayDropped());
  }

  /** Writes `text`, or counts it as dropped (`counted`: it was an event, not a keep-alive) when the client lags. */
  send(text: string, counted = true): void {
    if (this.response.writableLength > this.maxBufferedBytes) {
      if (counted) this.#dropped += 1;
      return;
    }
    this.#sayDropped();
    this.response.write(text);
  }

  #sayDropped(): void {
    if (this.#dropped === 0 || this.response.writableLength > this.maxBufferedBytes) return;
    const notice: PanelDroppedNotice = { count: this.#dropped };
    this.#dropped = 0;
    this.response.write(`event: dropped\ndata: ${JSON.stringify(notice)}\n\n`);
  }
}

/**
 * The Live events stream: every session event, once serialized, to every open client. Nothing is kept for a client
 * that reads slowly beyond `maxBufferedBytes`; what it missed is counted and said instead.
 */
export class PanelEventStream {
  readonly #clients = new Set<StreamClient>();
  readonly #options: PanelEventStreamOptions;
  readonly #keepAlive: NodeJS.Timeout;

  constructor(options: Partial<PanelEventStreamOptions> = {}) {
    this.#options = { ...DEFAULT_PANEL_EVENT_STREAM_OPTIONS, ...options };
    this.#keepAlive = setInterval(() => {
      for (const client of this.#clients) client.send(": keep-alive\n\n", false);
    }, this.#options.keepAliveMs);
    this.#keepAlive.unref();
  }

  get clientCount(): number {
    return this.#clients.size;
  }

  /** Starts an event stream on `response`; false (nothing written) when too many are open. */
  accept(response: ServerResponse): boolean {
    if (this.#clients.size >= this.#options.maxClients) return false;
    response.writeHead(200, {
      ...SECURITY_HEADERS,
      "Content-Type": "text/event-stream; charset=utf-8",
      Connection: "keep-alive",
    });
    // The browser reconnects by itself; a second is soon enough after Core restarts its panel.
    response.write("retry: 1000\n\n");
    const client = new StreamClient(response, this.#options.maxBufferedBytes);
    this.#clients.add(client);
    response.on("close", () => this.#clients.delete(client));
    return true;
  }

  publish(event: PanelEvent): void {
    if (this.#clients.size === 0) return;
    const text = `event: session-event\ndata: ${JSON.stringify(clipStrings(event, this.#options.maxStringLength))}\n\n`;
    for (const client of this.#clients) client.send(text);
  }

  close(): void {
    clearInterval(this.#keepAlive);
    for (const client of this.#clients) client.response.end();
    this.#clients.clear();
  }
}

/** A copy of a JSON value with every string longer than `limit` cut there, saying how much was left out. */
export function clipStrings<T>(value: T, limit: number): T {
  if (typeof value === "string") {
    return (value.length <= limit ? value : `${value.slice(0, limit)}… (${value.length - limit} more characters)`) as T;
  }
  if (Array.isArray(value)) return value.map((item: unknown) => clipStrings(item, limit)) as T;
  if (value !== null && typeof value === "object") {
    const copy: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) copy[key] = clipStrings(item, limit);
    return copy as T;
  }
  return value;
}
