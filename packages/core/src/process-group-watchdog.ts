import type { ChildProcess } from "node:child_process";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { log } from "./logger.js";
import { isProcessTag } from "./process-tag.js";

const WATCHDOG_PROGRAM = fileURLToPath(new URL("../programs/process-group-watchdog.mjs", import.meta.url));

/**
 * Node's child_process, loaded when the companion first starts: Core builds its watchdog before it listens, and
 * loading that module then would add to every start a few milliseconds that only the first provider run needs.
 */
const childProcess = (): typeof import("node:child_process") => createRequire(import.meta.url)("node:child_process");

/**
 * A small companion process that outlives Core by design: Core tells it which provider process groups are running,
 * with their runs' process tags (process-tag.ts), and when Core's end of the pipe closes (a crash, SIGKILL, a normal
 * exit) it kills every group still registered and every process carrying one of their tags.
 * It runs in its own process group and session, so a Ctrl+C aimed at Core's terminal does not reach it first.
 *
 * Line protocol on the companion's stdin: `+<pgid>` or `+<pgid> <tag>` watches a group (and the tag), `-<pgid>`
 * forgets it (and its tag).
 */
export class ProcessGroupWatchdog {
  /** Watched groups, each with its run's tag ("" when it has none, as a script run). */
  readonly #groups = new Map<number, string>();
  #child: ChildProcess | undefined;
  #closed = false;

  /** Starts watching `pgid`, and `processTag` when given; the companion is started on first use and again if it died. */
  watch(pgid: number, processTag?: string): void {
    if (this.#closed) return;
    const tag = processTag !== undefined && isProcessTag(processTag) ? processTag : "";
    this.#groups.set(pgid, tag);
    this.#send(watchLine(pgid, tag));
  }

  release(pgid: number): void {
    if (!this.#groups.delete(pgid)) return;
    this.#send(`-${pgid}`);
  }

  /** The pid of the companion, once started (for diagnostics and tests). */
  get pid(): number | undefined {
    return this.#child?.pid;
  }

  /** Ends the companion; groups still registered are killed by it, as if Core had died. */
  close(): void {
    this.#closed = true;
    this.#child?.stdin?.end();
    this.#child = undefined;
  }

  #send(line: string): void {
    const child = this.#child ?? this.#start();
    child?.stdin?.write(`${line}\n`);
  }

  #start(): ChildProcess | undefined {
    let child: ChildProcess;
    try {
      child = childProcess().spawn(process.execPath, [WATCHDOG_PROGRAM], { detached: true, stdio: ["pipe", "ignore", "ignore"] });
    } catch (error) {
      log("warn", "could not start the process watchdog", { error: (error as Error).message });
      return undefined;
    }
    // Core must be able to exit while the companion waits; the open pipe is what the companion watches.
    child.unref();
    (child.stdin as unknown as { unref?: () => void } | null)?.unref?.();
    child.stdin?.on("error", () => undefined);
    child.on("exit", () => {
      if (this.#child !== child) return;
      this.#child = undefined;
      if (this.#closed || this.#groups.size === 0) return;
      log("warn", "the process watchdog exited; starting it again");
      const restarted = this.#start();
      for (const [group, tag] of this.#groups) restarted?.stdin?.write(`${watchLine(group, tag)}\n`);
    });
    this.#child = child;
    return child;
  }
}

function watchLine(pgid: number, tag: string): string {
  return tag === "" ? `+${pgid}` : `+${pgid} ${tag}`;
}
