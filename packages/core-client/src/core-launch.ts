import { spawn } from "node:child_process";
import { mkdir, open } from "node:fs/promises";
import { join } from "node:path";
import { CoreConnection } from "./core-client.js";
import type { CoreLocation } from "./core-location.js";
import { pause, retryDelayMs, socketFileExists } from "./core-retry.js";

/**
 * Where a detached Core's stdout and stderr go: what it prints outside its own log (logs/core.log, which Core writes
 * and rotates itself), such as Node's own report of a crash.
 */
export const CORE_OUTPUT_FILE = "core-output.log";

/**
 * Starts Core's entry (`@pedelec/core/core-entry`, resolved by the caller) as a detached background process with the
 * given environment; its stdout and stderr go to logs/core-output.log. Returns its pid.
 */
export async function spawnCoreDetached(entryPath: string, location: Pick<CoreLocation, "logsDir">, env: NodeJS.ProcessEnv): Promise<number> {
  await mkdir(location.logsDir, { recursive: true, mode: 0o700 });
  const logFile = await open(join(location.logsDir, CORE_OUTPUT_FILE), "a", 0o600);
  const child = spawn(process.execPath, [entryPath], { detached: true, stdio: ["ignore", logFile.fd, logFile.fd], env });
  child.unref();
  await logFile.close();
  return child.pid ?? -1;
}

/** Tries to connect until Core accepts, the deadline passes (undefined), or `signal` aborts (undefined). */
export async function connectToCore(
  location: Pick<CoreLocation, "socketPath">,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<CoreConnection | undefined> {
  const deadline = Date.now() + timeoutMs;
  for (let attempt = 0; ; attempt += 1) {
    const connection = (await socketFileExists(location.socketPath))
      ? await CoreConnection.open(location.socketPath).catch(() => undefined)
      : undefined;
    if (connection || Date.now() >= deadline || signal?.aborted) return connection;
    await pause(Math.min(retryDelayMs(attempt), Math.max(0, deadline - Date.now())), signal);
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
