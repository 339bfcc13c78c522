// Core's start-up steps before it listens. They are synchronous: before Core listens nothing else runs yet, and each
// step through the thread pool cost a wake-up that Core's start waited for (node:fs/promises is not even loaded until
// the later part needs it).
import { chmodSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { ensureAttestationKey, type AttestationKeyState } from "./attestation-key.js";
import { acquireCoreLock } from "./core-lock.js";
import { resolveCorePaths, type CorePaths } from "./core-paths.js";
import { undoneOnFailure, type StartedStep } from "./core-start-up.js";
import { log } from "./logger.js";
import { ProcessGroupLedger } from "./process-group-ledger.js";
import { ProcessGroupWatchdog } from "./process-group-watchdog.js";
import { unlinkQuietly } from "./quiet-files.js";

/** The per-home lock: one Core per PEDELEC_HOME. */
export interface CoreLock {
  release(): void;
}

/** What keeps the process groups of provider runs and script runs from outliving Core. */
export interface CoreProcessGroups {
  watchdog: ProcessGroupWatchdog;
  processLedger: ProcessGroupLedger;
  scriptLedger: ProcessGroupLedger;
}

/** Resolves Core's paths and makes its home and run folders, both 0700. Leaves the folders when start-up fails. */
export function prepareCoreFolders(env: NodeJS.ProcessEnv): StartedStep<CorePaths> {
  const paths = resolveCorePaths(env);
  mkdirSync(paths.runDir, { recursive: true, mode: 0o700 });
  chmodSync(paths.home, 0o700);
  chmodSync(paths.runDir, 0o700);
  return { made: paths };
}

/** Takes the per-home lock (IPC_UNAVAILABLE when another Core holds it); undone by releasing it. */
export function takeCoreLock(paths: CorePaths): StartedStep<CoreLock> {
  const lock = acquireCoreLock(join(paths.runDir, "core.lock"));
  return { made: lock, undo: () => lock.release() };
}

/**
 * Clears what an earlier Core left behind, which only the lock's holder may do: its socket file, and the provider and
 * script processes its ledgers still list. Starts the watchdog that ends this Core's own process groups should it
 * die; undone by closing the watchdog.
 */
export function clearLeftovers(paths: CorePaths): Promise<StartedStep<CoreProcessGroups>> {
  // We hold the lock, so any socket file left here belongs to a Core that is gone.
  unlinkQuietly(paths.socketPath);
  const watchdog = new ProcessGroupWatchdog();
  return undoneOnFailure(
    () => watchdog.close(),
    () => {
      const processLedger = new ProcessGroupLedger(join(paths.runDir, "provider-processes"), watchdog);
      const scriptLedger = new ProcessGroupLedger(join(paths.runDir, "script-processes"), watchdog);
      const reaped = [...processLedger.reapLeftovers(), ...scriptLedger.reapLeftovers()];
      if (reaped.length > 0) log("info", "stopped provider and script processes left by an earlier run", { pids: reaped });
      return { watchdog, processLedger, scriptLedger };
    },
  );
}

/**
 * Reads Core's Full Access key, making it on a first start. The native host signs Full Access admissions with it and
 * reads it once Core answers, so it exists before Core listens; only this OS user can read it. A damaged key turns
 * Full Access off (logged), not Core. Nothing to undo: the key is kept.
 */
export function readCoreAttestationKey(paths: CorePaths): AttestationKeyState {
  const attestationKey = ensureAttestationKey(paths.keysDir);
  if (!attestationKey.usable) log("error", "Full Access is off: Core's key is not usable", { error: attestationKey.error.message });
  return attestationKey;
}
