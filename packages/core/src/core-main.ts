import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { startCore } from "./core-daemon.js";
import { resolveCorePaths } from "./core-paths.js";
import { log } from "./logger.js";
import { ProcessLog } from "./logging/process-log.js";

/** Runs Core in this process until SIGINT/SIGTERM or a shutdown request, logging to PEDELEC_HOME/logs/core.log. */
export async function runCoreForeground(env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const processLog = ProcessLog.open({ logsDir: resolveCorePaths(env).logsDir, fileName: "core.log", mirrorToWatchedStderr: true });
  // Listening before start-up begins: a signal that arrives while Core takes its lock or opens its socket stops it
  // cleanly, instead of killing it with a lock and a socket left behind.
  const stopping = new AbortController();
  const onSignal = (): void => stopping.abort(new PedelecError("IPC_UNAVAILABLE", "Core was asked to stop"));
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  try {
    const core = await startCore(env, { signal: stopping.signal, processLog });
    await core.stopped;
    return 0;
  } catch (error) {
    if (stopping.signal.aborted) return 0;
    const coded = PedelecError.from(error, "IPC_UNAVAILABLE");
    log("fatal", coded.message, { code: coded.code });
    return 1;
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    processLog.close();
  }
}
