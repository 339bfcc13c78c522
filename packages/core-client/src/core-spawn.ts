import { spawn } from "node:child_process";
import { mkdir, open } from "node:fs/promises";
import { join } from "node:path";
import type { CoreLocation } from "./core-location.js";

// Starting Core, apart from connecting to it: the native host's entry starts Core before it loads anything else.

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
