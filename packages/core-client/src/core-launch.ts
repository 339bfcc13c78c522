import { CoreConnection, type CoreConnectionOptions } from "./core-client.js";
import type { CoreLocation } from "./core-location.js";
import { pause, retryDelayMs, SocketFolderWatch, socketFileExists } from "./core-retry.js";

export { CORE_OUTPUT_FILE, spawnCoreDetached } from "./core-spawn.js";

/**
 * Tries to connect until Core accepts, the deadline passes (undefined), or `signal` aborts (undefined): again when the
 * socket's folder changes, and after each retry delay. `options` go to each CoreConnection.open.
 */
export async function connectToCore(
  location: Pick<CoreLocation, "socketPath">,
  timeoutMs: number,
  signal?: AbortSignal,
  options: CoreConnectionOptions = {},
): Promise<CoreConnection | undefined> {
  const deadline = Date.now() + timeoutMs;
  const folder = new SocketFolderWatch(location.socketPath);
  try {
    for (let attempt = 0; ; attempt += 1) {
      const connection = (await socketFileExists(location.socketPath))
        ? await CoreConnection.open(location.socketPath, undefined, options).catch(() => undefined)
        : undefined;
      if (connection || Date.now() >= deadline || signal?.aborted) return connection;
      await folder.pause(Math.min(retryDelayMs(attempt), Math.max(0, deadline - Date.now())), signal);
    }
  } finally {
    folder.close();
  }
}

/** Polls until Core answers a ping, or the deadline passes. */
export async function waitForCore(location: Pick<CoreLocation, "socketPath">, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  let attempt = 0;
  do {
    const connection = await connectToCore(location, Math.max(0, deadline - Date.now()));
    if (!connection) return false;
    try {
      await connection.request("ping", {});
      return true;
    } catch {
      // Accepted but could not answer (stopping, or still starting): try again until the deadline.
    } finally {
      connection.close();
    }
    await pause(Math.min(retryDelayMs(attempt++), Math.max(0, deadline - Date.now())));
  } while (Date.now() < deadline);
  return false;
}
