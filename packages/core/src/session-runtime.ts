// What serves sessions: settings, providers, the session manager, Full Access checks and the request router with every
// session request's schema. Core loads this module with its background start, once it listens (see core-background-start.ts), so
// connecting and the first ping wait for none of it.
import type { SessionEventEnvelope } from "@pedelec/protocol/session-events";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import type { AssetTransfers } from "./assets/asset-transfers.js";
import type { AttestationKeyState } from "./attestation-key.js";
import type { CorePaths } from "./core-paths.js";
import { FullAccessGate } from "./full-access-gate.js";
import { log } from "./logger.js";
import type { ProcessLog } from "./logging/process-log.js";
import type { ProcessGroupLedger } from "./process-group-ledger.js";
import { createProviderRegistry } from "./providers/provider-registry.js";
import { createRequestRouter, type RequestRoute } from "./request-router.js";
import { scriptRunnerSource } from "./script-runner-source.js";
import { SessionManager } from "./session-manager.js";
import type { SessionStore } from "./session-store/session-store.js";
import { SettingsSource } from "./settings.js";
import { sweepManagedWorkspaces } from "./workspace.js";

export interface SessionRuntimeOptions {
  paths: CorePaths;
  env: NodeJS.ProcessEnv;
  processLedger: ProcessGroupLedger;
  scriptLedger: ProcessGroupLedger;
  /** The key the native host signs Full Access admissions with (Core created it before listening). */
  /** Core's Full Access key, or why Full Access is off. */
  attestationKey: AttestationKeyState;
  publish: (envelope: SessionEventEnvelope) => void;
  processLog?: ProcessLog;
  /** The asset server's transfers once whenReady() has resolved; undefined before. */
  assets: () => AssetTransfers | undefined;
  /** Settles once the store is open, its sessions rebuilt and the asset server started; session requests wait for it. */
  whenReady: () => Promise<void>;
}

export interface SessionRuntime {
  sessions: SessionManager;
  settings: SettingsSource;
  /** Answers every request but ping and shutdown. */
  route: RequestRoute;
  /** Opens the store, rebuilds the sessions it holds, and removes managed workspaces no session owns any more. */
  restore(): Promise<void>;
  /** Ends the sessions' processes and stops the retention sweep. */
  shutdown(): Promise<void>;
}

/** How often sessions are checked against the retention setting. */
const RETENTION_SWEEP_INTERVAL_MS = 60 * 60_000;

export function createSessionRuntime(options: SessionRuntimeOptions): SessionRuntime {
  const { paths, env, processLog } = options;
  const settings = new SettingsSource(paths.settingsFile, (problem) => log("warn", "settings.json is not usable", { problem }));
  const sessions = new SessionManager({
    paths,
    loadSettings: async () => {
      const current = await settings.current();
      processLog?.setDebug(current.logging.debug);
      return current;
    },
    providers: createProviderRegistry(),
    env,
    processLedger: options.processLedger,
    scriptRunner: scriptRunnerSource(paths, env, options.scriptLedger),
    publish: options.publish,
  });
  // Sessions unused past the retention setting end even while Core keeps running for weeks.
  const retentionSweep = setInterval(() => {
    sessions.sweepExpired().catch((error: unknown) => log("warn", "session retention sweep failed", { error: String(error) }));
  }, RETENTION_SWEEP_INTERVAL_MS);
  retentionSweep.unref();
  const route = createRequestRouter({
    sessions,
    fullAccess: new FullAccessGate(options.attestationKey.usable ? options.attestationKey.key : options.attestationKey.error),
    assets: options.assets,
    whenReady: options.whenReady,
  });
  return {
    sessions,
    settings,
    route,
    restore: async () => {
      const restored = await sessions.restore(await openSessionStore(paths.sessionStoreFile));
      if (restored.restored + restored.expired > 0) log("info", "restored the sessions of an earlier run", { ...restored });
      const swept = await sweepManagedWorkspaces(paths.workspacesDir, sessions.liveManagedWorkspaces());
      if (swept > 0) log("info", "removed workspaces no session owns", { count: swept });
      await sessions.sweepExpired();
    },
    shutdown: async () => {
      clearInterval(retentionSweep);
      await sessions.shutdown();
    },
  };
}

/**
 * The store, or the reason it cannot be used (corrupt, locked by another process, written by a newer Pedelec). The
 * file is left as it is: Core still starts, and every session request answers with that reason and its remedy.
 */
async function openSessionStore(file: string): Promise<SessionStore | PedelecError> {
  try {
    // SQLite's native module loads here, with the rest of the background start.
    const { SessionStore } = await import("./session-store/session-store.js");
    return SessionStore.open(file);
  } catch (error) {
    const failure = PedelecError.from(error, "SESSION_STORE_FAILED");
    log("error", "the session store cannot be used; session requests are refused until it is fixed", { file, error: failure.message });
    return failure;
  }
}
