import { execFile } from "node:child_process";
import { isAbsolute } from "node:path";

const START = "__PEDELEC_PATH_START__";
const END = "__PEDELEC_PATH_END__";
export const LOGIN_SHELL_TIMEOUT_MS = 3_000;
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
 * markers, since profiles may print anything. A shell that fails or takes longer than 3 s adds nothing.
 */
export class LoginShellPath {
  #cached: ShellAnswer | undefined;

  constructor(
    private readonly env: Record<string, string | undefined>,
    private readonly timeoutMs = LOGIN_SHELL_TIMEOUT_MS,
  ) {}

  directories(): Promise<string[]> {
    if (this.#cached && Date.now() - this.#cached.at < CACHE_MS) return this.#cached.directories;
    this.#cached = startReading(this.env, this.timeoutMs);
    return this.#cached.directories;
  }

  /** The directories, if the shell has answered within the cache's lifetime; undefined while it has not (yet). */
  known(): string[] | undefined {
    return this.#cached && Date.now() - this.#cached.at < CACHE_MS ? this.#cached.settled : undefined;
  }
}

function startReading(env: Record<string, string | undefined>, timeoutMs: number): ShellAnswer {
  const answer: ShellAnswer = { at: Date.now(), directories: readLoginShellPath(env, timeoutMs) };
  void answer.directories.then((directories) => (answer.settled = directories));
  return answer;
}

function readLoginShellPath(env: Record<string, string | undefined>, timeoutMs: number): Promise<string[]> {
  const shell = env.SHELL;
  if (!shell || !isAbsolute(shell)) return Promise.resolve([]);
  const script = `printf '${START}%s${END}' "$PATH"`;
  return new Promise((resolve) => {
    execFile(
      shell,
      ["-l", "-i", "-c", script],
      { env, timeout: timeoutMs, killSignal: "SIGKILL", maxBuffer: 1024 * 1024 },
      (_error, stdout) => {
        // Even a shell that exits non-zero (a noisy profile) may have printed the PATH; only the markers count.
        const text = typeof stdout === "string" ? stdout : "";
        const start = text.lastIndexOf(START);
        const end = start < 0 ? -1 : text.indexOf(END, start);
        if (end < 0) return resolve([]);
        const path = text.slice(start + START.length, end);
        resolve(path.split(":").filter((entry) => isAbsolute(entry)));
      },
    );
  });
}
