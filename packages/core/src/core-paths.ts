import { homedir } from "node:os";
import { join, resolve } from "node:path";

/** Where everything Core owns lives. Every test uses its own PEDELEC_HOME. */
export interface CorePaths {
  home: string;
  runDir: string;
  socketPath: string;
  workspacesDir: string;
  logsDir: string;
  binDir: string;
  keysDir: string;
  settingsFile: string;
  /** Sessions and their recent events, kept across Core restarts (SQLite). */
  sessionStoreFile: string;
}

export function resolveCorePaths(env: NodeJS.ProcessEnv = process.env): CorePaths {
  const configured = env.PEDELEC_HOME?.trim();
  const home = resolve(configured ? configured : join(homedir(), ".pedelec"));
  const runDir = join(home, "run");
  return {
    home,
    runDir,
    socketPath: join(runDir, "core.sock"),
    workspacesDir: join(home, "workspaces"),
    logsDir: join(home, "logs"),
    binDir: join(home, "bin"),
    keysDir: join(home, "keys"),
    settingsFile: join(home, "settings.json"),
    sessionStoreFile: join(home, "sessions.db"),
  };
}
