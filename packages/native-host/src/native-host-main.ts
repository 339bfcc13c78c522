import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { spawnCoreDetached } from "@pedelec/core-client/core-launch";
import { log as writeLog } from "@pedelec/core/logger";
import { readLoggingDebug } from "@pedelec/core/logging/logging-debug-setting";
import { ProcessLog } from "@pedelec/core/logging/process-log";
import { locateCore } from "@pedelec/core-client/core-location";
import { splittingTransport } from "@pedelec/protocol/chunking";
import { NATIVE_CHUNK_BYTES } from "@pedelec/protocol/native-wire";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { coreEntryPath } from "./core-entry-path.js";
import { NativeHost } from "./native-host.js";
import { NativeMessagingStdio } from "./native-messaging-stdio.js";

/**
 * How long after start the host loads its file logger (pino): after it has sent its first request on, which a page is
 * waiting for. Lines logged before then are kept and written with their own times.
 */
const FILE_LOGGER_DELAY_MS = 50;

/** Core as the host's entry started it, before the rest of the host loaded. */
export interface CoreStartedEarly {
  pid: number;
  at: Date;
}

/**
 * Entry point Chrome starts (argv: [node, script, "chrome-extension://<id>/"]). Stdout carries only frames, so
 * everything else goes to PEDELEC_HOME/logs/native-host.log (several hosts may write it at once; see
 * docs/architecture/logging.md).
 */
export function runNativeHost(coreStartedEarly?: Promise<CoreStartedEarly | undefined>): void {
  const paths = locateCore(process.env);
  const processLog = ProcessLog.open({ logsDir: paths.logsDir, fileName: "native-host.log" });
  setTimeout(() => void processLog.start(() => readLoggingDebug(join(paths.home, "settings.json"))), FILE_LOGGER_DELAY_MS).unref();
  const log = (message: string, fields: Record<string, unknown> = {}, level: "info" | "warn" | "error" = "info"): void =>
    writeLog(level, message, fields);
  log("native host started", { caller: process.argv[2] ?? null });

  const timeout = Number.parseInt(process.env.PEDELEC_CORE_START_TIMEOUT_MS ?? "", 10);
  const toExtension = splittingTransport(new NativeMessagingStdio(process.stdin, process.stdout), {
    maxBytes: NATIVE_CHUNK_BYTES,
    createChunkId: randomUUID,
  });
  const host = new NativeHost({
    paths,
    coreLaunchedAtStart: coreStartedEarly?.then((early) => {
      if (early === undefined) return undefined;
      log("launched Core", { pid: early.pid, launchedAt: early.at.toISOString(), asTheHostStarted: true });
      return early.pid;
    }),
    sendToExtension: (message) => toExtension.send(message),
    launchCore: async () => {
      const pid = await spawnCoreDetached(coreEntryPath(), paths, process.env);
      log("launched Core", { pid });
    },
    coreStartTimeoutMs: Number.isInteger(timeout) && timeout > 0 ? timeout : 10_000,
    log,
    extensionOrigin: process.argv[2],
  });
  toExtension.onMessage((message) => host.handleMessage(message));
  toExtension.onClose((error) => {
    if (error !== undefined) {
      // A broken frame means the byte stream is out of step with Chrome; the only safe move is to stop.
      const code = error instanceof PedelecError ? error.code : undefined;
      writeLog("error", "unreadable frame from the browser; exiting", { code, error: error.message });
      process.exit(1);
    }
    log("stdin closed; exiting");
    host.stop();
    process.exit(0);
  });
  host.start();
}
