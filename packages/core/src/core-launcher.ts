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

/** Polls until Core answers a ping, or the deadline passes. */
export async function waitForCore(paths: CorePaths, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      const connection = await CoreConnection.open(paths.socketPath);
      try {
        await connection.request("ping", {});
        return true;
      } finally {
        connection.close();
      }
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  return false;
}
