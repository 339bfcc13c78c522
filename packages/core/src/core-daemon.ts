import { chmodSync, mkdirSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import type { SessionEventEnvelope } from "@pedelec/protocol/session-events";
import { coreLifecycleRequestSchemas, isCoreLifecycleRequestType } from "@pedelec/protocol/core-lifecycle-requests";
import type { CoreRequestFrame } from "@pedelec/protocol/core-request-frame";
import type { AssetTransfers, AssetTransfersOptions } from "./assets/asset-transfers.js";
import type { ControlPanel, ControlPanelOptions } from "./control-panel/control-panel.js";
import { DEFAULT_CONNECTION_LIMITS, PendingFrameBytes, type ConnectionLimits } from "./connection-limits.js";
import { CoreClientConnection } from "./core-connection.js";
import { acquireCoreLock } from "./core-lock.js";
import { unlinkQuietly } from "./quiet-files.js";
import { resolveCorePaths, type CorePaths } from "./core-paths.js";
import { CORE_VERSION } from "./core-version.js";
import { log } from "./logger.js";
import type { ProcessLog } from "./logging/process-log.js";
import { ProcessGroupWatchdog } from "./process-group-watchdog.js";
import { ProcessGroupLedger } from "./process-group-ledger.js";
import { connectionClaimant } from "./connection-claimant.js";
import { ensureAttestationKey } from "./attestation-key.js";
import { checkedPayload, reply } from "./request-reply.js";
import { answerHello } from "./protocol-hello.js";
import type { SessionManager } from "./session-manager.js";
import type { SessionRuntime } from "./session-runtime.js";
import type { Settings } from "./settings.js";

export interface RunningCore {
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
  stop(): Promise<void>;
}

export interface StartCoreOptions {
  /** Overrides for the socket's limits (see connection-limits.ts); tests use short timeouts and small caps. */
  connectionLimits?: Partial<ConnectionLimits>;
  /** The asset server's port, ticket lifetime and clock; tests shorten the lifetime or take the port away. */
  assets?: AssetTransfersOptions;
  /** The control panel's event stream limits; tests make a slow client lag sooner. */
  controlPanel?: ControlPanelOptions;
  /**
   * This process's log file (runCoreForeground opens logs/core.log): its file logger is loaded with the background
   * start, never before the first request, and follows the `logging.debug` setting.
   */
  processLog?: ProcessLog;
  /**
   * Stops Core: during start-up, start-up undoes what it did so far (lock, socket, asset server, companion) and
   * startCore rejects with the signal's reason; once started, it is the same as stop().
   */
  signal?: AbortSignal;
}

/**
 * Starts the desktop runtime: takes the per-home lock, replaces a stale socket, sweeps workspaces a crashed Core
 * left behind, and serves the Core protocol on PEDELEC_HOME/run/core.sock (dir 0700, socket 0600).
 */
export async function startCore(env: NodeJS.ProcessEnv = process.env, options: StartCoreOptions = {}): Promise<RunningCore> {
  const { signal } = options;
  // What start-up has set up so far, undone last-first if it cannot finish.
  const undo: (() => Promise<void> | void)[] = [];
  const unwind = async (): Promise<void> => {
    for (let step = undo.pop(); step !== undefined; step = undo.pop()) await Promise.resolve().then(step).catch(() => undefined);
  };
  const checkpoint = async (): Promise<void> => {
    if (!signal?.aborted) return;
    await unwind();
    log("info", "Core start-up stopped");
    throw signal.reason;
  };
  try {
    await checkpoint();
    return await startCoreSteps(env, options, undo, checkpoint);
  } catch (error) {
    await unwind();
    throw error;
  }
}

async function startCoreSteps(
  env: NodeJS.ProcessEnv,
  options: StartCoreOptions,
  undo: (() => Promise<void> | void)[],
  checkpoint: () => Promise<void>,
): Promise<RunningCore> {
  // Core's own file steps are synchronous: before it listens nothing else runs yet, and each step through the thread
  // pool cost a wake-up that Core's start waited for (node:fs/promises is not even loaded until the later part needs it).
  const paths = resolveCorePaths(env);
  mkdirSync(paths.runDir, { recursive: true, mode: 0o700 });
  chmodSync(paths.home, 0o700);
  chmodSync(paths.runDir, 0o700);
  await checkpoint();
  const lock = acquireCoreLock(join(paths.runDir, "core.lock"));
  undo.push(() => lock.release());
  await checkpoint();
  // We hold the lock, so any socket file left here belongs to a Core that is gone.
  unlinkQuietly(paths.socketPath);
  const watchdog = new ProcessGroupWatchdog();
  undo.push(() => watchdog.close());
  const processLedger = new ProcessGroupLedger(join(paths.runDir, "provider-processes"), watchdog);
  const scriptLedger = new ProcessGroupLedger(join(paths.runDir, "script-processes"), watchdog);
  const reaped = [...processLedger.reapLeftovers(), ...scriptLedger.reapLeftovers()];
  if (reaped.length > 0) log("info", "stopped provider and script processes left by an earlier run", { pids: reaped });
  await checkpoint();

  // The native host signs Full Access admissions with this key; only this OS user can read it. It exists before Core
  // listens: the native host reads it once Core answers. A damaged key turns Full Access off, not Core.
  const attestationKey = ensureAttestationKey(paths.keysDir);
  if (!attestationKey.usable) log("error", "Full Access is off: Core's key is not usable", { error: attestationKey.error.message });
  const connections = new Set<CoreClientConnection>();
  const publish = (envelope: SessionEventEnvelope): void => {
    for (const connection of connections) {
      if (connection.subscriptions.has(envelope.sessionId)) connection.send({ kind: "event", envelope });
    }
  };

  // What a session request needs and a ping does not: loaded once Core listens, so connecting and the first ping need
  // not wait for the session runtime's modules, SQLite, the asset server or a provider probe. It starts with the first
  // request that needs it, or shortly after Core listens when none comes.
  let runtime: SessionRuntime | undefined;
  let runtimeLoading: Promise<SessionRuntime> | undefined;
  const loadRuntime = (): Promise<SessionRuntime> => {
    if (stopping !== undefined && runtimeLoading === undefined) return Promise.reject(new PedelecError("IPC_UNAVAILABLE", "Core is stopping"));
    runtimeLoading ??= import("./session-runtime.js").then(({ createSessionRuntime }) => {
      runtime = createSessionRuntime({
        paths,
        env,
        processLedger,
        scriptLedger,
        attestationKey,
        publish,
        processLog: options.processLog,
        assets: () => assets,
        whenReady: startBackground,
      });
      return runtime;
    });
    return runtimeLoading;
  };
  let assets: AssetTransfers | undefined;
  let controlPanel: ControlPanel | undefined;
  let panelStarting: Promise<void> | undefined;
  let background: Promise<void> | undefined;
  const startBackground = (): Promise<void> => {
    clearTimeout(backgroundTimer);
    // A shutdown that came first leaves nothing to start: the store, servers and panel would outlive the socket.
    if (stopping !== undefined && background === undefined) return Promise.reject(new PedelecError("IPC_UNAVAILABLE", "Core is stopping"));
    background ??= (async () => {
      const loaded = await loadRuntime();
      const { sessions, settings } = loaded;
      sessions.warmUp();
      // Assets are not Core's reason to run: if their server cannot start, Core runs and the asset requests say so.
      const { AssetTransfers } = await import("./assets/asset-transfers.js");
      assets = await AssetTransfers.start({
        ...options.assets,
        quota: { limits: async () => (await settings.current()).limits, workspacesOf: (origin) => sessions.liveWorkspacesOf(origin) },
      });
      try {
        await loaded.restore();
      } finally {
        // The file logger and the panel load once what requests wait for is done; lines logged meanwhile are kept
        // until the log file is open. Like assets, the panel is not Core's reason to run: if it cannot start, Core
        // runs without it. It starts even when the sessions could not be rebuilt (its logs page shows why).
        void options.processLog?.start(async () => (await settings.current()).logging.debug);
        panelStarting = startControlPanel(paths, sessions, () => settings.current(), options.controlPanel).then((panel) => {
          controlPanel = panel;
        });
      }
    })();
    return background;
  };
  // A failure fails every request that waits for it, with the same error; Core keeps answering ping and shutdown.
  const backgroundFailed = (error: unknown): void => log("error", "Core could not rebuild its sessions", { error: String(error) });
  let backgroundTimer: NodeJS.Timeout | undefined;

  let stopping: Promise<void> | undefined;
  let markStopped: () => void = () => undefined;
  const stopped = new Promise<void>((resolve) => (markStopped = resolve));
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      log("info", "Core stopping");
      clearTimeout(backgroundTimer);
      server.close();
      await background?.catch(() => undefined);
      await panelStarting;
      await controlPanel?.close().catch((error: unknown) => log("warn", "the control panel did not close cleanly", { error: String(error) }));
      await assets?.close();
      await runtimeLoading?.catch(() => undefined);
      await runtime?.shutdown();
      watchdog.close();
      for (const connection of connections) connection.close();
      unlinkQuietly(paths.socketPath);
      lock.release();
      log("info", "Core stopped");
      markStopped();
    })();
    return stopping;
  };

  const startedAt = new Date().toISOString();
  /** Ping and shutdown, answered from the moment Core listens; whatever else a client asks waits for the runtime. */
  const answerLifecycle = (frame: CoreRequestFrame & { type: Exclude<keyof typeof coreLifecycleRequestSchemas, "hello"> }): unknown => {
    checkedPayload(coreLifecycleRequestSchemas[frame.type].payload, frame.type, frame.payload);
    if (frame.origin !== undefined) throw new PedelecError("INVALID_INPUT", `${frame.type} is not available to web pages`);
    if (frame.type === "shutdown") {
      setImmediate(() => void stop());
      return { stopping: true };
    }
    return {
      pid: process.pid,
      version: CORE_VERSION,
      home: paths.home,
      startedAt,
      sessions: runtime?.sessions.activeCount ?? 0,
      assetPort: assets?.port ?? null,
    };
  };
  const route = (connection: CoreClientConnection, frame: CoreRequestFrame): void => {
    const { type } = frame;
    // Answered before the connection's next frame is read: an incompatible client is refused before anything else runs.
    if (type === "hello") {
      answerHello(connection, frame);
      return;
    }
    if (isCoreLifecycleRequestType(type) && type !== "hello") {
      reply(connection, frame, async () => answerLifecycle({ ...frame, type }));
      return;
    }
    loadRuntime().then(
      (loaded) => loaded.route(connection, frame),
      (error: unknown) => reply(connection, frame, () => Promise.reject(error)),
    );
  };
  const limits: ConnectionLimits = { ...DEFAULT_CONNECTION_LIMITS, ...options.connectionLimits };
  const pendingFrameBytes = new PendingFrameBytes(limits.maxPendingFrameBytes);
  const server = createServer((socket) => {
    const connection = new CoreClientConnection(socket, {
      incompleteFrameTimeoutMs: limits.incompleteFrameTimeoutMs,
      pendingFrameBytes,
    });
    if (connections.size >= limits.maxConnections) {
      connection.refuse(
        new PedelecError("IPC_UNAVAILABLE", `Core is already serving ${limits.maxConnections} connections; try again shortly`),
      );
      return;
    }
    connections.add(connection);
    connection.onMessage((frame) => route(connection, frame));
    connection.onClose(() => {
      connections.delete(connection);
      // Tool calls claimed by pages behind this connection go back to whoever still follows the session.
      if (runtime !== undefined) releaseFollowers(runtime.sessions, connection, connections);
    });
  });
  await listen(server, paths.socketPath).catch((error: unknown) => {
    throw PedelecError.from(error, "IPC_UNAVAILABLE", "Core could not listen");
  });
  // Pushed after listen: a socket file there before it is another Core's, or already gone.
  undo.push(async () => {
    server.close();
    unlinkQuietly(paths.socketPath);
  });
  chmodSync(paths.socketPath, 0o600);
  await checkpoint();
  // From here on, stop() owns the clean-up.
  undo.length = 0;
  options.signal?.addEventListener("abort", () => void stop(), { once: true });
  log("info", "Core listening", { socket: paths.socketPath });
  // A shutdown request may have been served while start-up finished (the socket answers from listen() on).
  if (stopping === undefined) backgroundTimer = setTimeout(() => startBackground().catch(backgroundFailed), BACKGROUND_START_DELAY_MS);
  return {
    paths,
    get assetPort() {
      return assets?.port ?? null;
    },
    controlPanelUrl: async () => {
      await startBackground().catch(() => undefined);
      await panelStarting;
      return controlPanel?.url ?? null;
    },
    whenReady: startBackground,
    stopped,
    stop,
  };
}

/**
 * How long after listening Core starts loading what sessions need when no request has asked for it: long enough for
 * the native host's connection and first ping to be answered at once, short enough to be done before a page's first
 * session request usually arrives.
 */
const BACKGROUND_START_DELAY_MS = 50;

/** Starts the control panel (loaded only now, after Core listens); undefined when it cannot, which is logged. */
async function startControlPanel(
  paths: CorePaths,
  sessions: SessionManager,
  loadSettings: () => Promise<Settings>,
  options: ControlPanelOptions | undefined,
): Promise<ControlPanel | undefined> {
  try {
    const { ControlPanel } = await import("./control-panel/control-panel.js");
    const panel = await ControlPanel.start({ paths, sessions, loadSettings }, options);
    // The address holds the secret: only where it is, never what it is.
    log("info", "control panel listening", { port: panel.port, urlFile: paths.controlPanelUrlFile });
    return panel;
  } catch (error) {
    log("warn", "the control panel could not start; Core runs without it", { error: String(error) });
    return undefined;
  }
}

/** A closed connection's claimed tool calls go back to whoever still follows the session; unfollowed sessions are told. */
function releaseFollowers(sessions: SessionManager, connection: CoreClientConnection, connections: ReadonlySet<CoreClientConnection>): void {
  const prefix = connectionClaimant(connection, "");
  sessions.releaseToolClaims((claimant) => claimant.startsWith(prefix));
  for (const sessionId of connection.subscriptions) {
    const isFollowed = (): boolean => [...connections].some((other) => other.subscriptions.has(sessionId));
    if (!isFollowed()) sessions.routeLost(sessionId, isFollowed);
  }
}

function listen(server: Server, socketPath: string): Promise<void> {
  return new Promise((resolve, reject) => {
    // The socket is created 0600 from the start; chmod afterwards only confirms it.
    const previousMask = process.umask(0o177);
    server.once("error", (error) => {
      process.umask(previousMask);
      reject(error);
    });
    server.listen(socketPath, () => {
      process.umask(previousMask);
      resolve();
    });
  });
}
