import type { AssetTransfersOptions } from "./assets/asset-transfers.js";
import type { ConnectionLimits } from "./connection-limits.js";
import type { ControlPanelOptions } from "./control-panel/control-panel.js";
import type { ProcessLog } from "./logging/process-log.js";

/** How startCore runs Core; every field is optional. */
export interface StartCoreOptions {
  /** Overrides for the socket's limits (see connection-limits.ts); tests use short timeouts and small caps. */
  connectionLimits?: Partial<ConnectionLimits>;
  /** The asset server's port, ticket lifetime and clock; tests shorten the lifetime or take the port away. */
  assets?: AssetTransfersOptions;
  /** The control panel's event stream limits; tests make a slow client lag sooner. */
  controlPanel?: ControlPanelOptions;
  /**
   * This process's log file (runCoreForeground opens logs/core.log): its file logger is loaded with the background
   * start, never before the first request, and follows the `logging.debug` setting.
   */
  processLog?: ProcessLog;
  /**
   * Stops Core: during start-up, start-up undoes what it did so far (lock, socket, asset server, companion) and
   * startCore rejects with the signal's reason; once started, it is the same as stop().
   */
  signal?: AbortSignal;
}
