/**
 * What Core holds for clients of its socket, so no client (or crowd of them) can make it hold more:
 * a frame must be finished within {@link INCOMPLETE_FRAME_TIMEOUT_MS} of its first byte, at most
 * {@link MAX_CORE_CONNECTIONS} clients are served at once, and all unfinished frames together hold at most
 * {@link MAX_PENDING_FRAME_BYTES}. A client over a limit gets a fatal IPC_UNAVAILABLE frame and is closed;
 * idle connections between frames are never timed out (a native host stays connected for hours).
 */
export const INCOMPLETE_FRAME_TIMEOUT_MS = 30_000;
export const MAX_CORE_CONNECTIONS = 256;
export const MAX_PENDING_FRAME_BYTES = 64 * 1024 * 1024;

export interface ConnectionLimits {
  incompleteFrameTimeoutMs: number;
  maxConnections: number;
  maxPendingFrameBytes: number;
}

export const DEFAULT_CONNECTION_LIMITS: Readonly<ConnectionLimits> = {
  incompleteFrameTimeoutMs: INCOMPLETE_FRAME_TIMEOUT_MS,
  maxConnections: MAX_CORE_CONNECTIONS,
  maxPendingFrameBytes: MAX_PENDING_FRAME_BYTES,
};

/** The bytes of unfinished frames held by all of Core's connections together. */
export class PendingFrameBytes {
  #held = 0;

  constructor(readonly limit: number) {}

  get held(): number {
    return this.#held;
  }

  /** Records a change in what one connection holds; false when growth took the total over the limit. */
  change(delta: number): boolean {
    this.#held += delta;
    return delta <= 0 || this.#held <= this.limit;
  }
}
