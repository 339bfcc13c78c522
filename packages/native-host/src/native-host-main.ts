import { randomUUID } from "node:crypto";
import { appendFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { spawnCoreDetached } from "@pedelec/core-client/core-launch";
import { locateCore } from "@pedelec/core-client/core-location";
import { splittingTransport } from "@pedelec/protocol/chunking";
import { NATIVE_CHUNK_BYTES } from "@pedelec/protocol/native-wire";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { NativeHost } from "./native-host.js";
import { NativeMessagingStdio } from "./native-messaging-stdio.js";

/**
 * Entry point Chrome starts (argv: [node, script, "chrome-extension://<id>/"]). Stdout carries only frames, so
 * everything else goes to PEDELEC_HOME/logs/native-host.log.
 */
export function runNativeHost(): void {
  const paths = locateCore(process.env);
  mkdirSync(paths.logsDir, { recursive: true, mode: 0o700 });
  const logFile = join(paths.logsDir, "native-host.log");
  const log = (message: string, fields: Record<string, unknown> = {}): void => {
    try {
      appendFileSync(logFile, `${JSON.stringify({ time: new Date().toISOString(), pid: process.pid, message, ...fields })}\n`, { mode: 0o600 });
    } catch {
      // Logging must never break the pipe to Chrome.
    }
  };
  log("native host started", { caller: process.argv[2] ?? null });

  const timeout = Number.parseInt(process.env.PEDELEC_CORE_START_TIMEOUT_MS ?? "", 10);
  const toExtension = splittingTransport(new NativeMessagingStdio(process.stdin, process.stdout), {
    maxBytes: NATIVE_CHUNK_BYTES,
    createChunkId: randomUUID,
  });
  const host = new NativeHost({
    paths,
    sendToExtension: (message) => toExtension.send(message),
    launchCore: async () => {
      // The host starts Core's published entry, never its internals.
      const pid = await spawnCoreDetached(fileURLToPath(import.meta.resolve("@pedelec/core/core-entry")), paths, process.env);
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
      log("unreadable frame from the browser; exiting", { code, error: error.message });
      process.exit(1);
    }
    log("stdin closed; exiting");
    host.stop();
    process.exit(0);
  });
  host.start();
}
