import { chmod, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach } from "vitest";
import { startCore, type RunningCore } from "../core-daemon.js";

/** A temporary PEDELEC_HOME and the environment that starts Core on it. */
export interface CoreHome {
  home: string;
  env: NodeJS.ProcessEnv;
}

export interface CoreHomeOptions {
  /** The start of the temporary home's name. */
  prefix: string;
  /** Where Core looks for the provider CLIs first. */
  providerPath: string;
  /** Environment variables that point a CLI at its own state, each to a folder of that name under the home. */
  stateFolders?: Record<string, string>;
  /** A built pedelec-cli entry: the home gets the launcher `pedelec install` writes, which runs it. */
  pedelecCliEntry?: string;
  /** More launchers in the home's bin folder, program name → built entry (e.g. pedelec-agent, pedelec-ts-runtime). */
  launchers?: Record<string, string>;
}

/** A fresh PEDELEC_HOME for one test; the caller stops Core and removes the home. */
export async function createCoreHome(options: CoreHomeOptions): Promise<CoreHome> {
  const home = await mkdtemp(join(tmpdir(), options.prefix));
  const stateEnv = Object.fromEntries(Object.entries(options.stateFolders ?? {}).map(([name, folder]) => [name, join(home, folder)]));
  const launchers = { ...options.launchers, ...(options.pedelecCliEntry !== undefined ? { "pedelec-cli": options.pedelecCliEntry } : {}) };
  for (const [program, entry] of Object.entries(launchers)) {
    // Core puts PEDELEC_HOME/bin first on the agent's PATH, where the installed launchers live, pinned to their home.
    await mkdir(join(home, "bin"), { recursive: true, mode: 0o700 });
    const launcher = join(home, "bin", program);
    await writeFile(launcher, `#!/bin/sh\nPEDELEC_HOME='${home}'\nexport PEDELEC_HOME\nexec '${process.execPath}' '${entry}' "$@"\n`);
    await chmod(launcher, 0o755);
  }

  return { home, env: { ...process.env, PEDELEC_HOME: home, PEDELEC_PROVIDER_PATH: options.providerPath, ...stateEnv } };
}

/** The Core of one test, on a fresh home. */
export interface CoreUnderTest {
  /** This test's PEDELEC_HOME. */
  readonly home: string;
  /** Starts Core on the home; it is stopped after the test. */
  start(): Promise<RunningCore>;
}

/**
 * Gives each test a fresh home (see createCoreHome); after the test, stops the Core it started and removes the home.
 * Options that exist only once a beforeAll has run can be passed as a function.
 */
export function useCoreUnderTest(options: CoreHomeOptions | (() => CoreHomeOptions)): CoreUnderTest {
  let current: CoreHome | undefined;
  let core: RunningCore | undefined;
  beforeEach(async () => {
    current = await createCoreHome(typeof options === "function" ? options() : options);
  });
  afterEach(async () => {
    await core?.stop();
    core = undefined;
    if (current !== undefined) await rm(current.home, { recursive: true, force: true });
    current = undefined;
  });
  const started = (): CoreHome => {
    if (current === undefined) throw new Error("the Core home exists only while a test runs");
    return current;
  };
  return {
    get home() {
      return started().home;
    },
    async start() {
      core = await startCore(started().env);
      return core;
    },
  };
}
