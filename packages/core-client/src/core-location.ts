import { homedir } from "node:os";
import { join, resolve } from "node:path";

/**
 * What a local program needs to find of Core's PEDELEC_HOME (default `~/.pedelec`): the home, the socket, the logs
 * folder and the keys folder. Core's own CorePaths holds these same entries, so either can be passed where this is
 * asked for.
 */
export interface CoreLocation {
  home: string;
  socketPath: string;
  logsDir: string;
  keysDir: string;
}

export function locateCore(env: NodeJS.ProcessEnv = process.env): CoreLocation {
  const configured = env.PEDELEC_HOME?.trim();
  const home = resolve(configured ? configured : join(homedir(), ".pedelec"));
  return { home, socketPath: join(home, "run", "core.sock"), logsDir: join(home, "logs"), keysDir: join(home, "keys") };
}
