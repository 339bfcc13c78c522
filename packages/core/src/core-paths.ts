import { homedir } from "node:os";
import { join, resolve, win32 } from "node:path";
import { windowsPipePath } from "@pedelec/core-client/core-location";

/** Where everything Core owns lives. Every test uses its own PEDELEC_HOME. */
export interface CorePaths {
  home: string;
  runDir: string;
  /** The local socket: `run/core.sock`, or on Windows a named pipe (see windowsPipePath). */
  socketPath: string;
  workspacesDir: string;
  logsDir: string;
  binDir: string;
  keysDir: string;
  settingsFile: string;
  /** Sessions and their recent events, kept across Core restarts (SQLite). */
  sessionStoreFile: string;
  /** The last successful probe of each provider CLI, so a new Core need not run `<cli> --version` again. */
  providerProbeCacheFile: string;
  /** The control panel's address with its per-launch secret (0600), written once it listens, removed when Core stops. */
  controlPanelUrlFile: string;
}

export function resolveCorePaths(env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): CorePaths {
  const path = platform === "win32" ? win32 : { join, resolve };
  const configured = env.PEDELEC_HOME?.trim();
  const home = path.resolve(configured ? configured : path.join(homedir(), ".pedelec"));
  const runDir = path.join(home, "run");
  return {
    home,
    runDir,
    socketPath: platform === "win32" ? windowsPipePath(home, env.USERNAME ?? "") : path.join(runDir, "core.sock"),
    workspacesDir: path.join(home, "workspaces"),
    logsDir: path.join(home, "logs"),
    binDir: path.join(home, "bin"),
    keysDir: path.join(home, "keys"),
    settingsFile: path.join(home, "settings.json"),
    sessionStoreFile: path.join(home, "sessions.db"),
    providerProbeCacheFile: path.join(home, "provider-probes.json"),
    controlPanelUrlFile: path.join(runDir, "control-panel.url"),
  };
}
