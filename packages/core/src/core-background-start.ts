// What a session request needs and a ping does not: loaded once Core listens, so connecting and the first ping need not
// wait for the session runtime's modules, SQLite, the asset server or a provider probe. It starts with the first request
// that needs it, or shortly after Core listens when none comes.
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import type { SessionEventEnvelope } from "@pedelec/protocol/session-events";
import type { AssetTransfers, AssetTransfersOptions } from "./assets/asset-transfers.js";
import type { AttestationKeyState } from "./attestation-key.js";
import type { ControlPanel, ControlPanelOptions } from "./control-panel/control-panel.js";
import type { CorePaths } from "./core-paths.js";
import type { CoreProcessGroups } from "./core-start-steps.js";
import { startControlPanel } from "./control-panel-start.js";
import { log } from "./logger.js";
import type { ProcessLog } from "./logging/process-log.js";
import type { SessionRuntime } from "./session-runtime.js";

/**
 * How long after listening Core starts loading what sessions need when no request has asked for it: long enough for
 * the native host's connection and first ping to be answered at once, short enough to be done before a page's first
 * session request usually arrives.
 */
export const BACKGROUND_START_DELAY_MS = 50;

/** What the background start builds on: what start-up made before listening, and Core's options. */
export interface CoreBackgroundStartParts {
  paths: CorePaths;
  env: NodeJS.ProcessEnv;
  processGroups: CoreProcessGroups;
  attestationKey: AttestationKeyState;
  /** Sends a session's event to the connections that follow it. */
  publish(envelope: SessionEventEnvelope): void;
  assets?: AssetTransfersOptions;
  controlPanel?: ControlPanelOptions;
  processLog?: ProcessLog;
}

/**
 * Core's background start: the session runtime (loaded by the first request that needs it), then the asset server,
 * the session store with the sessions it holds, the file logger and the control panel. Each part starts once; once
 * Core is stopping, what has not begun never does.
 */
export class CoreBackgroundStart {
  readonly #parts: CoreBackgroundStartParts;
  #runtime: SessionRuntime | undefined;
  #runtimeLoading: Promise<SessionRuntime> | undefined;
  #assets: AssetTransfers | undefined;
  #controlPanel: ControlPanel | undefined;
  #panelStarting: Promise<void> | undefined;
  #started: Promise<void> | undefined;
  #scheduled: NodeJS.Timeout | undefined;
  #refused = false;

  constructor(parts: CoreBackgroundStartParts) {
    this.#parts = parts;
  }

  /** The session runtime, once loaded. */
  get runtime(): SessionRuntime | undefined {
    return this.#runtime;
  }

  /** The asset server's port, or null when it has not started (or could not). */
  get assetPort(): number | null {
    return this.#assets?.port ?? null;
  }

  /** Loads the session runtime once; rejects with IPC_UNAVAILABLE when Core began stopping before it was asked for. */
  loadRuntime(): Promise<SessionRuntime> {
    if (this.#refused && this.#runtimeLoading === undefined) return Promise.reject(new PedelecError("IPC_UNAVAILABLE", "Core is stopping"));
    const parts = this.#parts;
    this.#runtimeLoading ??= import("./session-runtime.js").then(({ createSessionRuntime }) => {
      this.#runtime = createSessionRuntime({
        paths: parts.paths,
        env: parts.env,
        processLedger: parts.processGroups.processLedger,
        scriptLedger: parts.processGroups.scriptLedger,
        attestationKey: parts.attestationKey,
        publish: parts.publish,
        processLog: parts.processLog,
        assets: () => this.#assets,
        whenReady: () => this.start(),
      });
      return this.#runtime;
    });
    return this.#runtimeLoading;
  }

  /**
   * Runs the background start once; resolves when the store is open, its sessions rebuilt and the asset server runs.
   * Rejects when the sessions could not be rebuilt (every caller gets the same error), or with IPC_UNAVAILABLE when
   * Core began stopping before it started.
   */
  start(): Promise<void> {
    clearTimeout(this.#scheduled);
    // A shutdown that came first leaves nothing to start: the store, servers and panel would outlive the socket.
    if (this.#refused && this.#started === undefined) return Promise.reject(new PedelecError("IPC_UNAVAILABLE", "Core is stopping"));
    this.#started ??= this.#run();
    return this.#started;
  }

  /** Starts the background start after `delayMs` unless a request starts it first; a failure is logged. */
  schedule(delayMs: number): void {
    // A shutdown request may have been served while start-up finished (the socket answers from listen() on).
    if (this.#refused) return;
    this.#scheduled = setTimeout(() => this.start().catch(logBackgroundFailure), delayMs);
  }

  /** The control panel's address once it has started (starting the background start if need be), or null. */
  async controlPanelUrl(): Promise<string | null> {
    await this.start().catch(() => undefined);
    await this.#panelStarting;
    return this.#controlPanel?.url ?? null;
  }

  /** From now on nothing that has not begun starts: the scheduled start is cancelled, and later calls reject. */
  refuseToStart(): void {
    this.#refused = true;
    clearTimeout(this.#scheduled);
  }

  /** Waits for what has begun to start, then closes it: the control panel, the asset server, the session runtime. */
  async close(): Promise<void> {
    await this.#started?.catch(() => undefined);
    await this.#panelStarting;
    await this.#controlPanel?.close().catch((error: unknown) => log("warn", "the control panel did not close cleanly", { error: String(error) }));
    await this.#assets?.close();
    await this.#runtimeLoading?.catch(() => undefined);
    await this.#runtime?.shutdown();
  }

  async #run(): Promise<void> {
    const parts = this.#parts;
    const loaded = await this.loadRuntime();
    const { sessions, settings } = loaded;
    sessions.warmUp();
    // Assets are not Core's reason to run: if their server cannot start, Core runs and the asset requests say so.
    const { AssetTransfers } = await import("./assets/asset-transfers.js");
    this.#assets = await AssetTransfers.start({
      ...parts.assets,
      quota: { limits: async () => (await settings.current()).limits, workspacesOf: (origin) => sessions.liveWorkspacesOf(origin) },
    });
    try {
      await loaded.restore();
    } finally {
      // The file logger and the panel load once what requests wait for is done; lines logged meanwhile are kept
      // until the log file is open. Like assets, the panel is not Core's reason to run: if it cannot start, Core
      // runs without it. It starts even when the sessions could not be rebuilt (its logs page shows why).
      void parts.processLog?.start(async () => (await settings.current()).logging.debug);
      this.#panelStarting = startControlPanel(parts.paths, sessions, () => settings.current(), parts.controlPanel).then((panel) => {
        this.#controlPanel = panel;
      });
    }
  }
}

/** A failure fails every request that waits for it, with the same error; Core keeps answering ping and shutdown. */
function logBackgroundFailure(error: unknown): void {
  log("error", "Core could not rebuild its sessions", { error: String(error) });
}
