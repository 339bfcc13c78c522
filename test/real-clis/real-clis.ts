import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** The three agent CLIs the registry has, run for real by the tests (pinned in this folder's package-lock.json). */
export type RealCli = "claude" | "codex" | "opencode";
export const REAL_CLIS: readonly RealCli[] = ["claude", "codex", "opencode"];

const folder = fileURLToPath(new URL(".", import.meta.url));
/** Where `npm ci` in this folder puts the CLIs' launchers. */
export const realCliBinDir = join(folder, "node_modules", ".bin");

const PACKAGES: Record<RealCli, string> = { claude: "@anthropic-ai/claude-code", codex: "@openai/codex", opencode: "opencode-ai" };

/**
 * The absolute path of a pinned real CLI. A missing one is a failure, never a skip: the test set-up
 * (`scripts/install-test-clis.mjs`, run by `npm test`) installs them.
 */
export function realCliPath(cli: RealCli): string {
  const path = join(realCliBinDir, cli);
  if (!existsSync(path)) {
    throw new Error(`${cli} is not installed in ${folder}; run \`node scripts/install-test-clis.mjs\` (npm test does)`);
  }
  return path;
}

/** The pinned version of a real CLI, as this folder's lock file has it. */
export function realCliVersion(cli: RealCli): string {
  const lock = JSON.parse(readFileSync(join(folder, "package-lock.json"), "utf8")) as { packages: Record<string, { version: string }> };
  const entry = lock.packages[`node_modules/${PACKAGES[cli]}`];
  if (entry === undefined) throw new Error(`${PACKAGES[cli]} is not pinned in ${folder}/package-lock.json`);
  return entry.version;
}
