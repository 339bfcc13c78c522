import { MAX_CORE_FRAME_BYTES } from "@pedelec/protocol/core-wire";
import type { SessionEventEnvelope } from "@pedelec/protocol/session-events";

/** The bytes `{"kind":"event","envelope":…}` adds around an envelope on the Core socket. */
const EVENT_FRAME_OVERHEAD = Buffer.byteLength('{"kind":"event","envelope":}');

/**
 * Why `envelope` cannot travel as one Core frame (too large, or too deep for JSON.stringify), or undefined when it
 * can. Session events are checked before they take a seq, so an event that could never be sent leaves no gap.
 */
export function eventFrameProblem(envelope: SessionEventEnvelope): string | undefined {
  let json: string;
  try {
    json = JSON.stringify(envelope);
  } catch (error) {
    return `it cannot be written as JSON (${error instanceof Error ? error.message : String(error)})`;
  }
  const bytes = Buffer.byteLength(json) + EVENT_FRAME_OVERHEAD;
  return bytes > MAX_CORE_FRAME_BYTES ? `it takes ${bytes} bytes and a frame holds ${MAX_CORE_FRAME_BYTES}` : undefined;
}
