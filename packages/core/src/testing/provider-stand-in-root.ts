import { chmod, mkdir, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";

/** What an adapter test runs a stand-in CLI in: a temporary root, an empty workspace and the agent's environment. */
export interface StandInRoot {
  root: string;
  workspace: string;
  env: Record<string, string>;
}

export interface StandInRootOptions {
  /** The start of the temporary root's name. */
  prefix: string;
  /** Environment variables that point the CLI at its own state, each to a folder of that name under the root. */
  stateFolders?: Record<string, string>;
  /** What the fake pedelec-cli prints for a tool's spec, and for any command it does not know (inside single quotes: none in it). */
  toolSpecAnswer?: string;
}

/** A pedelec-cli that records its argv in $PEDELEC_TEST_ARGV_FILE and answers like the real one. */
function fakePedelecCli(toolSpecAnswer: string): string {
  return `#!/bin/sh
printf '%s\\n' "$@" > "$PEDELEC_TEST_ARGV_FILE"
case "$4" in
  add_card) echo '{"id":"card-4","title":"Buy milk"}' ;;
  add_card_spec) echo '{"type":"object"}' ;;
  broken) echo '{"error":{"code":"TOOL_HANDLER_ERROR","message":"handler threw"}}'; exit 1 ;;
  *) echo '${toolSpecAnswer}' ;;
esac
`;
}

/** A temporary root with a workspace and a fake pedelec-cli first on PATH; the caller removes the root. */
export async function createStandInRoot(options: StandInRootOptions): Promise<StandInRoot> {
  const root = await mkdtemp(path.join(tmpdir(), options.prefix));
  const workspace = path.join(root, "workspace");
  await mkdir(workspace);
  const bin = path.join(root, "bin");
  await mkdir(bin);
  const pedelecCli = path.join(bin, "pedelec-cli");
  await writeFile(pedelecCli, fakePedelecCli(options.toolSpecAnswer ?? '{"type":"object"}'));
  await chmod(pedelecCli, 0o755);
  const stateEnv = Object.fromEntries(Object.entries(options.stateFolders ?? {}).map(([name, folder]) => [name, path.join(root, folder)]));
  const env = {
    PATH: `${bin}${path.delimiter}${process.env.PATH ?? "/usr/bin:/bin"}`,
    HOME: path.join(root, "home"),
    ...stateEnv,
    PEDELEC_TEST_ARGV_FILE: path.join(root, "pedelec-cli-argv.txt"),
  };
  return { root, workspace, env };
}
