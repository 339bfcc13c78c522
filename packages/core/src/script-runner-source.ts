import { join } from "node:path";
import type { ScriptRunner } from "@pedelec/script-runtime/script-runner";
import type { CorePaths } from "./core-paths.js";
import type { ProcessGroupLedger } from "./process-group-ledger.js";
import { log } from "./logger.js";

/**
 * Core's one script runner, made on first use: finding the pinned Deno and probing the OS wall cost a few processes,
 * and the runner's code a share of Core's start, which a Core that never runs a script should not pay. A failure is
 * not kept, so installing bubblewrap or repairing the install works without restarting Core.
 */
export function scriptRunnerSource(paths: CorePaths, env: NodeJS.ProcessEnv, processGroups: ProcessGroupLedger): () => Promise<ScriptRunner> {
  let pending: Promise<ScriptRunner> | undefined;
  return () => {
    pending ??= (async () => {
      const [{ locateDeno }, { detectSandboxWall }, { ScriptRunner }] = await Promise.all([
        import("@pedelec/script-runtime/deno-binary"),
        import("@pedelec/script-runtime/sandbox-wall"),
        import("@pedelec/script-runtime/script-runner"),
      ]);
      const [denoPath, wall] = await Promise.all([locateDeno(), detectSandboxWall(env)]);
      log("info", "script runtime ready", { deno: denoPath, wall: wall.kind, ...(wall.kind === "none" ? { reason: wall.reason } : {}) });
      return new ScriptRunner({ denoPath, wall, privateDir: join(paths.home, "runtime"), hostEnv: env, processGroups });
    })().catch((error: unknown) => {
      pending = undefined;
      throw error;
    });
    return pending;
  };
}
