import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { onTestFinished } from "vitest";
import { privateCliEnvironment, type PrivateCliEnvironment } from "../real-clis/cli-environment.js";
import type { RealCli } from "../real-clis/real-clis.js";
import type { ModelServer } from "./model-server-types.js";
import { cleanBaseEnvironment, startRealCli, type RealCliProcess } from "./real-cli-process.js";

/** A model server, a private environment and a working folder for one test's runs of a real CLI. */
export interface RealCliRun {
  server: ModelServer;
  environment: PrivateCliEnvironment;
  /** The CLI's working folder (empty, not a git repository). */
  cwd: string;
  /** Starts the CLI with the clean base environment, the private one and `extraEnv` (test-only knobs). */
  start(args: readonly string[], options: { stdin: string | null; extraEnv?: Record<string, string> }): RealCliProcess;
}

/**
 * Prepares a run of a real CLI in the current test; when the test finishes, every CLI it started is stopped (its
 * process group ended), the server closed and the temp folder removed.
 */
export async function prepareRealCliRun(cli: RealCli, startServer: () => Promise<ModelServer>): Promise<RealCliRun> {
  const folder = await mkdtemp(join(tmpdir(), `pedelec-${cli}-`));
  const server = await startServer();
  const started: RealCliProcess[] = [];
  onTestFinished(async () => {
    await Promise.all(started.map((process) => process.stop()));
    await server.close();
    await rm(folder, { recursive: true, force: true });
  });
  const cwd = join(folder, "work");
  await mkdir(cwd);
  const environment = await privateCliEnvironment(cli, server, folder);
  return {
    server,
    environment,
    cwd,
    start(args, options) {
      const env = { ...cleanBaseEnvironment(), ...environment.env, ...options.extraEnv };
      const process = startRealCli(cli, args, { cwd, env, stdin: options.stdin });
      started.push(process);
      return process;
    },
  };
}
