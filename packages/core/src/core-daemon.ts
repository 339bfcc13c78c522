import { assembleCore, type AssembledCore } from "./core-assembly.js";
import { BACKGROUND_START_DELAY_MS } from "./core-background-start.js";
import type { CorePaths } from "./core-paths.js";
import { listenOnCoreSocket } from "./core-socket-listen.js";
import { runStartUp, type StartUp } from "./core-start-up.js";
import { clearLeftovers, prepareCoreFolders, readCoreAttestationKey, takeCoreLock } from "./core-start-steps.js";
import type { StartCoreOptions } from "./core-start-options.js";
import { log } from "./logger.js";

export type { StartCoreOptions } from "./core-start-options.js";

/** A Core serving its socket in this process, as startCore resolves it. */
export interface RunningCore {
  /** Where this Core keeps its files and socket. */
  paths: CorePaths;
  /** The loopback port asset bodies travel through, or null when the asset server could not start (or has not yet). */
  readonly assetPort: number | null;
  /**
   * Resolves once the session store is open, its sessions are rebuilt and the asset server runs (started now if it
   * has not yet; see BACKGROUND_START_DELAY_MS). Rejects when rebuilding the sessions failed.
   */
  whenReady(): Promise<void>;
  /**
   * The control panel's address with its secret, once it has started (after the background start, which no request
   * waits on), or null when it could not start. Written to `run/control-panel.url` for `pedelec open`; never logged or
   * sent on the socket.
   */
  controlPanelUrl(): Promise<string | null>;
  /** Resolves once Core has stopped (after stop() or a shutdown request). */
  stopped: Promise<void>;
  /** Stops Core: closes the socket, the control panel, the asset server and the sessions, then releases the lock. */
  stop(): Promise<void>;
}

/**
 * Starts the desktop runtime: takes the per-home lock, replaces a stale socket, sweeps workspaces a crashed Core
 * left behind, and serves the Core protocol on PEDELEC_HOME/run/core.sock (dir 0700, socket 0600).
 */
export async function startCore(env: NodeJS.ProcessEnv = process.env, options: StartCoreOptions = {}): Promise<RunningCore> {
  const { paths, background, stop } = await runStartUp(options.signal, (startUp) => runStartUpPlan(startUp, env, options));
  // From here on, stop() owns the clean-up.
  options.signal?.addEventListener("abort", () => void stop.stop(), { once: true });
  log("info", "Core listening", { socket: paths.socketPath });
  background.schedule(BACKGROUND_START_DELAY_MS);
  return {
    paths,
    get assetPort() {
      return background.assetPort;
    },
    controlPanelUrl: () => background.controlPanelUrl(),
    whenReady: () => background.start(),
    stopped: stop.stopped,
    stop: () => stop.stop(),
  };
}

/**
 * Core's start-up, step by step (core-start-up.ts keeps each step's undo and checks the stop signal after it): its
 * folders, the lock, what an earlier Core left, the Full Access key, then the socket. What sessions need is only
 * prepared here; it loads once Core listens (core-background-start.ts).
 */
async function runStartUpPlan(startUp: StartUp, env: NodeJS.ProcessEnv, options: StartCoreOptions): Promise<AssembledCore> {
  const paths = await startUp.step(prepareCoreFolders, env);
  const lock = await startUp.step(takeCoreLock, paths);
  const processGroups = await startUp.step(clearLeftovers, paths);
  const attestationKey = readCoreAttestationKey(paths);
  const core = assembleCore({ env, options, paths, lock, processGroups, attestationKey });
  await startUp.step(listenOnCoreSocket, { server: core.server, socketPath: paths.socketPath, accept: core.accept });
  return core;
}
