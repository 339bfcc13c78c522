import { appendFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { resolveCorePaths } from "@pedelec/core/core-paths";
import { launchCoreDetached } from "@pedelec/core/core-launcher";
import { NativeHost } from "./native-host.js";
import { NativeMessagingStdio } from "./native-messaging-stdio.js";

/**
 * Entry point Chrome starts (argv: [node, script, "chrome-extension://<id>/"]). Stdout carries only frames, so
 * everything else goes to PEDELEC_HOME/logs/native-host.log.
 */
export function runNativeHost(): void {
  const paths = resolveCorePaths(process.env);
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
  let host: NativeHost | undefined;
  const stdio = new NativeMessagingStdio(process.stdin, process.stdout, {
    onMessage: (message) => host?.handleMessage(message),
    onBadFrame: (error) => {
      // A broken frame means the byte stream is out of step with Chrome; the only safe move is to stop.
      log("unreadable frame from the browser; exiting", { code: error.code, error: error.message });
      process.exit(1);
    },
    onEnd: () => {
      log("stdin closed; exiting");
      host?.stop();
      process.exit(0);
    },
  });
  host = new NativeHost({
    paths,
    sendToExtension: (message) => stdio.send(message),
    launchCore: async () => {
      const pid = await launchCoreDetached(paths, process.env);
      log("launched Core", { pid });
    },
    coreStartTimeoutMs: Number.isInteger(timeout) && timeout > 0 ? timeout : 10_000,
    log,
    extensionOrigin: process.argv[2],
  });
  host.start();
}
