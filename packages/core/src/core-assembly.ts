import { createServer, type Server, type Socket } from "node:net";
import type { AttestationKeyState } from "./attestation-key.js";
import { ClientConnections } from "./client-connections.js";
import { DEFAULT_CONNECTION_LIMITS } from "./connection-limits.js";
import type { CoreClientConnection } from "./core-connection.js";
import { CoreBackgroundStart } from "./core-background-start.js";
import type { CorePaths } from "./core-paths.js";
import { createCoreRoute } from "./core-route.js";
import type { StartCoreOptions } from "./core-start-options.js";
import type { CoreLock, CoreProcessGroups } from "./core-start-steps.js";
import { CoreStop } from "./core-stop.js";
import { unlinkQuietly } from "./quiet-files.js";

/** What Core is assembled from: its options and what start-up made before it listens. */
export interface CoreAssemblyParts {
  env: NodeJS.ProcessEnv;
  options: StartCoreOptions;
  paths: CorePaths;
  lock: CoreLock;
  processGroups: CoreProcessGroups;
  attestationKey: AttestationKeyState;
}

/** A Core ready to listen: its server, who takes the server's clients, its background start and its stop. */
export interface AssembledCore {
  paths: CorePaths;
  /** Not yet listening; listenOnCoreSocket makes it serve. */
  server: Server;
  /** Takes a client that connected to the server. */
  accept(socket: Socket): void;
  background: CoreBackgroundStart;
  stop: CoreStop;
}

/**
 * Wires up what serves Core's socket: the client connections, the background start that loads what sessions need,
 * the routing of requests, and the stop that closes it all. Starts nothing: nothing runs before the server listens.
 */
export function assembleCore(parts: CoreAssemblyParts): AssembledCore {
  const { env, options, paths, lock, processGroups, attestationKey } = parts;
  const connections = new ClientConnections({ ...DEFAULT_CONNECTION_LIMITS, ...options.connectionLimits });
  const background = new CoreBackgroundStart({
    paths,
    env,
    processGroups,
    attestationKey,
    publish: (envelope) => connections.publish(envelope),
    assets: options.assets,
    controlPanel: options.controlPanel,
    processLog: options.processLog,
  });
  const server = createServer();
  const stop = new CoreStop(() => closeCore({ paths, lock, processGroups, connections, background, server }));
  const route = createCoreRoute({
    home: paths.home,
    activeSessions: () => background.runtime?.sessions.activeCount ?? 0,
    assetPort: () => background.assetPort,
    loadRuntime: () => background.loadRuntime(),
    stop: () => stop.stop(),
  });
  const closed = (connection: CoreClientConnection): void => {
    // Tool calls claimed by pages behind this connection go back to whoever still follows the session.
    const runtime = background.runtime;
    if (runtime !== undefined) connections.releaseFollowers(runtime.sessions, connection);
  };
  return { paths, server, accept: (socket) => connections.accept(socket, { route, closed }), background, stop };
}

/** Everything a running Core closes when it stops. */
interface RunningCoreParts {
  paths: CorePaths;
  lock: CoreLock;
  processGroups: CoreProcessGroups;
  connections: ClientConnections;
  background: CoreBackgroundStart;
  server: Server;
}

/**
 * Closes a running Core, in order: nothing that has not begun starts, the socket takes no more clients, what the
 * background start began is closed, then the watchdog, the connections, the socket file and the lock.
 */
async function closeCore(parts: RunningCoreParts): Promise<void> {
  parts.background.refuseToStart();
  parts.server.close();
  await parts.background.close();
  parts.processGroups.watchdog.close();
  parts.connections.closeAll();
  unlinkQuietly(parts.paths.socketPath);
  parts.lock.release();
}
