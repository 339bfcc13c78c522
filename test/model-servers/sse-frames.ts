import type { SseEvent } from "./wire-format.js";

/** The bytes of Server-Sent Events frames, each ended by a blank line. */
export function sseFrames(events: readonly SseEvent[]): string {
  return events.map((event) => `${event.event === undefined ? "" : `event: ${event.event}\n`}data: ${event.data}\n\n`).join("");
}

/** An SSE event whose data is the JSON of `data`, with `event:` set to `data.type` (the Anthropic and Responses style). */
export function typedEvent(data: { type: string } & Record<string, unknown>): SseEvent {
  return { event: data.type, data: JSON.stringify(data) };
}
