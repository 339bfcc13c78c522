import { homedir } from "node:os";
import { join, resolve, win32 } from "node:path";

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

export function locateCore(env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): CoreLocation {
  const path = platform === "win32" ? win32 : { join, resolve };
  const configured = env.PEDELEC_HOME?.trim();
  const home = path.resolve(configured ? configured : path.join(homedir(), ".pedelec"));
  const socketPath = platform === "win32" ? windowsPipePath(home, env.USERNAME ?? "") : path.join(home, "run", "core.sock");
  return { home, socketPath, logsDir: path.join(home, "logs"), keysDir: path.join(home, "keys") };
}

/**
 * Core's named pipe on Windows. Pipes live in one machine-wide namespace rather than in a folder, so the name carries
 * the user and a digest of the home: two users, or two homes of one user, never meet. Windows paths ignore case, so the
 * digest does too.
 */
export function windowsPipePath(home: string, userName: string): string {
  const user =
    userName
      .toLowerCase()
      .replace(/[^a-z0-9._-]/g, "_")
      .slice(0, 64) || "user";
  return `\\\\.\\pipe\\pedelec-core-${user}-${digest(home.toLowerCase())}`;
}

/** 64 bits of FNV-1a (two 32-bit lanes with different seeds) as hex: names a pipe without loading node:crypto. */
function digest(text: string): string {
  let first = 0x811c9dc5;
  let second = 0x01000193 ^ 0x5bd1e995;
  for (let index = 0; index < text.length; index += 1) {
    const code = text.charCodeAt(index);
    first = Math.imul(first ^ code, 0x01000193) >>> 0;
    second = Math.imul(second ^ code, 0x01000193) >>> 0;
    second = (second ^ (second >>> 13)) >>> 0;
  }
  return first.toString(16).padStart(8, "0") + second.toString(16).padStart(8, "0");
}
