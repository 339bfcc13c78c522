import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { AccessMode } from "@pedelec/protocol/domain";
import type { PedelecError } from "@pedelec/protocol/pedelec-error";
import type { ScriptRunResult } from "@pedelec/protocol/script-run";

export interface RunLogInput {
  runId: string;
  threadId: string;
  access: AccessMode;
  /** The workspace-relative entry, or "stdin". */
  entry: string;
  argsCount: number;
  result?: ScriptRunResult;
  refusal?: PedelecError;
  cancelReason?: string;
  cleanupErrors: readonly string[];
}

/**
 * Writes `<ws>/.pedelec-runtime/logs/run-<UTC timestamp>-<runId>.json`: how the run went, never what it printed.
 * The file is created exclusively, so an existing file or symlink at that name is never written through.
 */
export async function writeRunLog(runtimeFolder: string, startedAt: Date, input: RunLogInput): Promise<string> {
  const stamp = startedAt.toISOString().replace(/[-:]/g, "").replace(".", "");
  const path = join(runtimeFolder, "logs", `run-${stamp}-${input.runId}.json`);
  const result = input.result;
  const record = {
    runId: input.runId,
    threadId: input.threadId,
    access: input.access,
    entry: input.entry,
    argsCount: input.argsCount,
    startedAt: startedAt.toISOString(),
    walls: result?.walls ?? [],
    termination: result?.termination ?? "refused",
    exitCode: result?.exitCode ?? null,
    signal: result?.signal ?? null,
    durationMs: result === undefined ? null : Math.round(result.durationMs),
    stdoutTruncated: result?.stdoutTruncated ?? false,
    stderrTruncated: result?.stderrTruncated ?? false,
    ...(input.refusal === undefined ? {} : { refusal: { code: input.refusal.code, message: input.refusal.message } }),
    ...(input.cancelReason === undefined ? {} : { cancelReason: input.cancelReason }),
    ...(result?.processTreeCleanupError === undefined ? {} : { processTreeCleanupError: result.processTreeCleanupError }),
    ...(result?.captureError === undefined ? {} : { captureError: result.captureError }),
    ...(input.cleanupErrors.length === 0 ? {} : { cleanupErrors: input.cleanupErrors }),
  };
  await writeFile(path, `${JSON.stringify(record, null, 2)}\n`, { flag: "wx", mode: 0o600 });
  return path;
}
