// Kills the provider process groups Core registered once Core is gone, however it went: a killed Core cannot stop
// its agents itself, but the kernel closes its end of this program's stdin, and that is the signal.
// Plain JavaScript (no build step), so Core can start it from its sources and from its build alike.
// stdin lines: "+<pgid>" or "+<pgid> <tag>" watch a group and, with a tag, every process whose environment has
// PEDELEC_PROCESS_TAG=<tag> (also those in a session of their own); "-<pgid>" forget the group and its tag.
// The variable's name, the tag's shape and the walk of /proc are those of src/process-tag.ts.
import { readdirSync, readFileSync } from "node:fs";

const TAG_ASSIGNMENT = Buffer.from("PEDELEC_PROCESS_TAG=", "latin1");
const TAG_PATTERN = /^[0-9a-f]{32}$/;
const MAX_WALKED_PROCESSES = 100_000;
/** How long to go on walking and killing: a process that forked just before its SIGKILL is found by a later walk. */
const KILL_DEADLINE_MS = 3_000;

/** Watched groups, each with its run's tag ("" for none). */
const runs = new Map();
let pending = "";
let ending = false;

/** Pids (this program excepted) whose environment assigns the tag variable one of `tags`; null without /proc. */
function taggedPids(tags) {
  let names;
  try {
    names = readdirSync("/proc");
  } catch {
    return null;
  }
  const pids = [];
  let walked = 0;
  for (const name of names) {
    const pid = Number(name);
    if (!Number.isInteger(pid) || pid <= 1 || pid === process.pid) continue;
    walked += 1;
    if (walked > MAX_WALKED_PROCESSES) break;
    let environ;
    try {
      // Another user's process, or a non-dumpable one, cannot be read; a zombie's environment reads empty.
      environ = readFileSync(`/proc/${pid}/environ`);
    } catch {
      continue;
    }
    if (carriesOneOf(environ, tags)) pids.push(pid);
  }
  return pids;
}

/** Whether a whole NUL-separated entry of `environ` is `PEDELEC_PROCESS_TAG=<one of tags>`. */
function carriesOneOf(environ, tags) {
  let at = environ.indexOf(TAG_ASSIGNMENT);
  while (at !== -1) {
    if (at === 0 || environ[at - 1] === 0) {
      const start = at + TAG_ASSIGNMENT.length;
      const nul = environ.indexOf(0, start);
      if (tags.has(environ.toString("latin1", start, nul === -1 ? environ.length : nul))) return true;
    }
    at = environ.indexOf(TAG_ASSIGNMENT, at + 1);
  }
  return false;
}

function kill(target) {
  try {
    process.kill(target, "SIGKILL");
  } catch {
    // Already gone.
  }
}

async function killAllAndExit() {
  if (ending) return;
  ending = true;
  for (const group of runs.keys()) kill(-group);
  const tags = new Set([...runs.values()].filter((tag) => tag !== ""));
  const deadline = Date.now() + KILL_DEADLINE_MS;
  while (tags.size > 0 && Date.now() < deadline) {
    const pids = taggedPids(tags);
    if (pids === null || pids.length === 0) break;
    for (const pid of pids) kill(pid);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  process.exit(0);
}

process.stdin.setEncoding("utf8");
process.stdin.on("data", (text) => {
  pending += text;
  const lines = pending.split("\n");
  pending = lines.pop() ?? "";
  for (const line of lines) {
    const [pgid = "", tag = ""] = line.slice(1).split(" ");
    const group = Number.parseInt(pgid, 10);
    if (!Number.isInteger(group) || group <= 1) continue;
    if (line.startsWith("+")) runs.set(group, TAG_PATTERN.test(tag) ? tag : "");
    else if (line.startsWith("-")) runs.delete(group);
  }
});
process.stdin.on("end", killAllAndExit);
process.stdin.on("error", killAllAndExit);
