import { closeSync, openSync, readdirSync, readSync } from "node:fs";

/**
 * The environment variable that marks every process of one provider run with that run's tag (`newProcessTag()` in
 * providers/provider-process.ts). Children inherit it, also those that leave the run's process group and session
 * (the shell tools of Claude Code and OpenCode call setsid), so at the end of the run Core finds and ends them by it.
 * The name avoids KEY, SECRET and TOKEN: codex drops variables named like that from the commands it runs.
 * programs/process-group-watchdog.mjs spells the same name.
 */
export const PROCESS_TAG_VARIABLE = "PEDELEC_PROCESS_TAG";

/** 128 random bits as lowercase hex: no unrelated process carries it, and it cannot break a line or a file name. */
const TAG_PATTERN = /^[0-9a-f]{32}$/;

/** Whether `value` is shaped like a tag Core makes; nothing else is ever looked for. */
export function isProcessTag(value: string): boolean {
  return TAG_PATTERN.test(value);
}

/** A walk looks at no more /proc entries than this (the default pid_max is 32,768; 4,194,304 on large machines). */
const MAX_WALKED_PROCESSES = 100_000;
/** Environment bytes read per process; the kernel's default limit for argv and environment together is 2 MiB. */
const MAX_ENVIRON_BYTES = 4 * 1024 * 1024;
const BASE_BUFFER_BYTES = 64 * 1024;
const ASSIGNMENT = Buffer.from(`${PROCESS_TAG_VARIABLE}=`, "latin1");

let environBuffer = Buffer.allocUnsafe(BASE_BUFFER_BYTES);

export interface TaggedProcess {
  pid: number;
  tag: string;
}

/**
 * Every process (Core itself excepted) whose environment assigns the tag variable exactly one of `tags`, read from
 * /proc/<pid>/environ. Processes whose environment cannot be read (another user's, a non-dumpable one) are skipped,
 * and so are zombies and exiting processes, whose environment reads empty: they run nothing. Null when /proc is not
 * there (macOS, Windows): callers then rely on process groups alone.
 */
export function findTaggedProcesses(tags: ReadonlySet<string>): TaggedProcess[] | null {
  let names: string[];
  try {
    names = readdirSync("/proc");
  } catch {
    return null;
  }
  const found: TaggedProcess[] = [];
  if (tags.size === 0) return found;
  let walked = 0;
  for (const name of names) {
    const first = name.charCodeAt(0);
    if (first < 48 || first > 57) continue;
    const pid = Number(name);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    walked += 1;
    if (walked > MAX_WALKED_PROCESSES) break;
    const length = readEnviron(pid);
    if (length === 0) continue;
    const tag = assignedTag(environBuffer.subarray(0, length), tags);
    if (tag !== null) found.push({ pid, tag });
  }
  if (environBuffer.length > BASE_BUFFER_BYTES) environBuffer = Buffer.allocUnsafe(BASE_BUFFER_BYTES);
  return found;
}

/**
 * The first of `tags` that `environ` (NUL-separated `NAME=value` entries) assigns to the tag variable, or null. Only a
 * whole entry counts: `OTHER_PEDELEC_PROCESS_TAG=…` or a value that merely starts with a tag does not.
 */
export function assignedTag(environ: Buffer, tags: ReadonlySet<string>): string | null {
  let at = environ.indexOf(ASSIGNMENT);
  while (at !== -1) {
    if (at === 0 || environ[at - 1] === 0) {
      const start = at + ASSIGNMENT.length;
      const nul = environ.indexOf(0, start);
      const value = environ.toString("latin1", start, nul === -1 ? environ.length : nul);
      if (tags.has(value)) return value;
    }
    at = environ.indexOf(ASSIGNMENT, at + 1);
  }
  return null;
}

/** Reads /proc/<pid>/environ into `environBuffer`; returns its length, 0 when it cannot be read. */
function readEnviron(pid: number): number {
  let fd: number;
  try {
    fd = openSync(`/proc/${pid}/environ`, "r");
  } catch {
    return 0;
  }
  let length = 0;
  try {
    for (;;) {
      if (length === environBuffer.length) {
        if (length >= MAX_ENVIRON_BYTES) break;
        const larger = Buffer.allocUnsafe(Math.min(length * 2, MAX_ENVIRON_BYTES));
        environBuffer.copy(larger, 0, 0, length);
        environBuffer = larger;
      }
      const wanted = environBuffer.length - length;
      const count = readSync(fd, environBuffer, length, wanted, null);
      length += count;
      // The kernel fills the whole request unless it reached the end of the environment: a short read is the end,
      // which saves every process a second read.
      if (count < wanted) break;
    }
  } catch {
    // The process went away while we read (ESRCH): what was read is all there is.
  } finally {
    closeSync(fd);
  }
  return length;
}

function signalEach(processes: readonly TaggedProcess[], signal: NodeJS.Signals): void {
  for (const { pid } of processes) {
    try {
      process.kill(pid, signal);
    } catch {
      // ESRCH: it ended between the walk and the signal.
    }
  }
}

/** Walks this many times at most when killing synchronously: each pass catches what forked during the one before. */
const MAX_SYNC_PASSES = 5;

/**
 * SIGKILLs every process tagged with one of `tags`, walking again until a walk finds nothing new (a process that
 * forked just before its signal), at most a few times; returns the pids signalled. Does not wait for them to end. For
 * leftovers of a Core that is gone (`ProcessGroupLedger.reapLeftovers`), where nobody waits for a graceful end.
 */
export function killTaggedProcesses(tags: ReadonlySet<string>): number[] {
  const signalled = new Set<number>();
  for (let pass = 0; pass < MAX_SYNC_PASSES; pass += 1) {
    const fresh = (findTaggedProcesses(tags) ?? []).filter(({ pid }) => !signalled.has(pid));
    if (fresh.length === 0) break;
    signalEach(fresh, "SIGKILL");
    for (const { pid } of fresh) signalled.add(pid);
  }
  return [...signalled];
}

export interface TaggedProcessesEnded {
  /** False when /proc is not there, so nothing could be looked for. */
  supported: boolean;
  /** Pids found tagged and signalled. */
  signalled: number[];
  /** Pids still tagged at the deadline (a process stuck in the kernel); empty when all ended. */
  left: number[];
}

export interface EndTaggedProcessesOptions {
  /** Time between SIGTERM and SIGKILL. */
  graceMs: number;
  /** How long to wait after SIGKILL for the last of them to end. */
  killTimeoutMs?: number;
  /** Time between walks while waiting. */
  pollMs?: number;
}

const DEFAULT_KILL_TIMEOUT_MS = 2_000;
const DEFAULT_POLL_MS = 25;

/**
 * Ends every process tagged `tag`: SIGTERM, then SIGKILL to whatever is left after `graceMs`, then waits (bounded)
 * until a walk finds none. A process that forks while this runs is found by a later walk and signalled too. When
 * nothing carries the tag this is one walk.
 */
export async function endTaggedProcesses(tag: string, options: EndTaggedProcessesOptions): Promise<TaggedProcessesEnded> {
  const tags = new Set([tag]);
  const first = findTaggedProcesses(tags);
  if (first === null) return { supported: false, signalled: [], left: [] };
  const signalled = new Set<number>();
  const pollMs = options.pollMs ?? DEFAULT_POLL_MS;
  const terminateUntil = Date.now() + options.graceMs;
  let current = first;
  while (current.length > 0 && Date.now() < terminateUntil) {
    const fresh = current.filter(({ pid }) => !signalled.has(pid));
    signalEach(fresh, "SIGTERM");
    for (const { pid } of fresh) signalled.add(pid);
    await sleep(Math.min(pollMs, Math.max(0, terminateUntil - Date.now())));
    current = findTaggedProcesses(tags) ?? [];
  }
  const killUntil = Date.now() + (options.killTimeoutMs ?? DEFAULT_KILL_TIMEOUT_MS);
  while (current.length > 0 && Date.now() < killUntil) {
    signalEach(current, "SIGKILL");
    for (const { pid } of current) signalled.add(pid);
    await sleep(Math.min(10, pollMs));
    current = findTaggedProcesses(tags) ?? [];
  }
  return { supported: true, signalled: [...signalled], left: current.map(({ pid }) => pid) };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
