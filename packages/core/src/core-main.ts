import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { startCore } from "./core-daemon.js";
import { log } from "./logger.js";

/** Runs Core in this process until SIGINT/SIGTERM or a shutdown request. */
export async function runCoreForeground(env: NodeJS.ProcessEnv = process.env): Promise<number> {
  let core;
  try {
    core = await startCore(env);
  } catch (error) {
    const coded = PedelecError.from(error, "IPC_UNAVAILABLE");
    log("error", coded.message, { code: coded.code });
    return 1;
  }
  const onSignal = (): void => void core.stop();
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  await core.stopped;
  return 0;
}
