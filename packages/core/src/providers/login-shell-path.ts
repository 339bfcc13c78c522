import { spawn, type ChildProcess } from "node:child_process";
import { isAbsolute } from "node:path";
import { signalGroup } from "../process-group.js";

const START = "__PEDELEC_PATH_START__";
const END = "__PEDELEC_PATH_END__";
export const LOGIN_SHELL_TIMEOUT_MS = 3_000;
/** How long a shell stopped for taking too long has to run its exit traps before it is killed. */
const KILL_GRACE_MS = 1_000;
/** What is kept of the shell's output: a profile may print a lot, the PATH is short. */
const MAX_OUTPUT_BYTES = 1024 * 1024;
const CACHE_MS = 60_000;

interface ShellAnswer {
  at: number;
  directories: Promise<string[]>;
  /** The directories once the shell has answered. */
  settled?: string[];
}

/**
 * The PATH the user's login shell sets up. Core is often started by the browser, whose PATH lacks what the user's
 * shell profile adds (nvm, Homebrew, ~/.local/bin…), where agent CLIs and the `node` they run on usually live. The
 * shell runs as a login, interactive shell (profiles differ in which they read), and the PATH is picked out between
 * markers, since profiles may print anything. A shell that fails or takes longer than 3 s adds nothing, and is
 * stopped with everything its profile started.
 */
export class LoginShellPath {
  #cached: ShellAnswer | undefined;
  readonly #stopped = new AbortController();

  constructor(
    private readonly env: Record<string, string | undefined>,
    private readonly timeoutMs = LOGIN_SHELL_TIMEOUT_MS,
  ) {}

  directories(): Promise<string[]> {
    if (this.#stopped.signal.aborted) return Promise.resolve(this.#cached?.settled ?? []);
    if (this.#cached && Date.now() - this.#cached.at < CACHE_MS) return this.#cached.directories;
    this.#cached = startReading(this.env, this.timeoutMs, this.#stopped.signal);
    return this.#cached.directories;
  }

  /**
   * Core is stopping: a shell still reading is stopped with what its profile started (its wait answers with nothing),
   * so it neither outlives Core nor holds Core's exit for its 3 s, and no new one starts.
   */
  stop(): void {
    this.#stopped.abort();
  }

  /** The directories, if the shell has answered within the cache's lifetime; undefined while it has not (yet). */
  known(): string[] | undefined {
    return this.#cached && Date.now() - this.#cached.at < CACHE_MS ? this.#cached.settled : undefined;
  }
}

function startReading(env: Record<string, string | undefined>, timeoutMs: number, signal: AbortSignal): ShellAnswer {
  const answer: ShellAnswer = { at: Date.now(), directories: readLoginShellPath(env, timeoutMs, signal) };
  void answer.directories.then((directories) => (answer.settled = directories));
  return answer;
}

function readLoginShellPath(env: Record<string, string | undefined>, timeoutMs: number, signal: AbortSignal): Promise<string[]> {
  const shell = env.SHELL;
  if (!shell || !isAbsolute(shell)) return Promise.resolve([]);
  const script = `printf '${START}%s${END}' "$PATH"`;
  return new Promise((resolve) => {
    let child: ChildProcess;
    try {
      // A group of its own, so a shell that takes too long is stopped with what its profile started.
      child = spawn(shell, ["-l", "-i", "-c", script], { env, detached: true, stdio: ["ignore", "pipe", "ignore"] });
    } catch {
      resolve([]);
      return;
    }
    const pieces: Buffer[] = [];
    let bytes = 0;
    let settled = false;
    const finish = (directories: string[]): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal.removeEventListener("abort", giveUp);
      resolve(directories);
    };
    const giveUp = (): void => {
      if (settled) return;
      finish([]);
      stopGroup(child);
    };
    const timer = setTimeout(giveUp, timeoutMs);
    signal.addEventListener("abort", giveUp, { once: true });
    child.stdout?.on("data", (chunk: Buffer) => {
      if (bytes >= MAX_OUTPUT_BYTES) return;
      pieces.push(chunk);
      bytes += chunk.length;
    });
    child.on("error", () => finish([]));
    // Even a shell that exits non-zero (a noisy profile) may have printed the PATH; only the markers count.
    child.on("close", () => finish(pathBetweenMarkers(Buffer.concat(pieces).toString("utf8"))));
  });
}

function pathBetweenMarkers(text: string): string[] {
  const start = text.lastIndexOf(START);
  const end = start < 0 ? -1 : text.indexOf(END, start);
  if (end < 0) return [];
  return text
    .slice(start + START.length, end)
    .split(":")
    .filter((entry) => isAbsolute(entry));
}

/**
 * SIGTERM first, so the profile's scripts run their exit traps (pyenv's rehash, for one, holds a lock file that every
 * later shell waits a minute for when it is killed outright), then SIGKILL for whatever is left.
 */
function stopGroup(child: ChildProcess): void {
  signalGroup(child, "SIGTERM");
  setTimeout(() => signalGroup(child, "SIGKILL"), KILL_GRACE_MS).unref();
}
