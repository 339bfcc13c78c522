import { spawn } from "node:child_process";
import { mkdir, open } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { CoreConnection } from "./core-client.js";
import type { CorePaths } from "./core-paths.js";

/** Starts Core as a detached background process with the given environment; its output goes to logs/core.log. */
export async function launchCoreDetached(paths: CorePaths, env: NodeJS.ProcessEnv): Promise<number> {
  await mkdir(paths.logsDir, { recursive: true, mode: 0o700 });
  const logFile = await open(join(paths.logsDir, "core.log"), "a", 0o600);
  const child = spawn(process.execPath, [fileURLToPath(new URL("./core-entry.js", import.meta.url))], {
    detached: true,
    stdio: ["ignore", logFile.fd, logFile.fd],
    env,
  });
  child.unref();
  await logFile.close();
  return child.pid ?? -1;
}

/** Tries to connect until Core accepts, the deadline passes (undefined), or `signal` aborts (undefined). */
export async function connectToCore(paths: CorePaths, timeoutMs: number, signal?: AbortSignal): Promise<CoreConnection | undefined> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const connection = await CoreConnection.open(paths.socketPath).catch(() => undefined);
    if (connection || Date.now() >= deadline || signal?.aborted) return connection;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Polls until Core answers a ping, or the deadline passes. */
export async function waitForCore(paths: CorePaths, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  do {
    const connection = await connectToCore(paths, Math.max(0, deadline - Date.now()));
    if (!connection) return false;
    try {
      await connection.request("ping", {});
      return true;
    } catch {
      // Accepted but could not answer (stopping, or still starting): try again until the deadline.
    } finally {
      connection.close();
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  } while (Date.now() < deadline);
  return false;
}
