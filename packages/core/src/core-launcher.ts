import { fileURLToPath } from "node:url";
import { spawnCoreDetached } from "@pedelec/core-client/core-launch";
import type { CorePaths } from "./core-paths.js";

/**
 * Starts this Core as a detached background process with the given environment. Core writes and rotates
 * logs/core.log itself; what it prints outside that log goes to logs/core-output.log. It runs Core's published entry,
 * which the package exports as its one-file bundle (scripts/bundle.mjs): that loads several times faster than the
 * modules it holds.
 */
export function launchCoreDetached(paths: CorePaths, env: NodeJS.ProcessEnv): Promise<number> {
  return spawnCoreDetached(fileURLToPath(import.meta.resolve("@pedelec/core/core-entry")), paths, env);
}
