// Kills the provider process groups Core registered once Core is gone, however it went: a killed Core cannot stop
// its agents itself, but the kernel closes its end of this program's stdin, and that is the signal.
// Plain JavaScript (no build step), so Core can start it from its sources and from its build alike.
// stdin lines: "+<pgid>" watch a group, "-<pgid>" forget it.
const groups = new Set();
let pending = "";

function killAllAndExit() {
  for (const group of groups) {
    try {
      process.kill(-group, "SIGKILL");
    } catch {
      // The group already ended.
    }
  }
  process.exit(0);
}

process.stdin.setEncoding("utf8");
process.stdin.on("data", (text) => {
  pending += text;
  const lines = pending.split("\n");
  pending = lines.pop() ?? "";
  for (const line of lines) {
    const group = Number.parseInt(line.slice(1), 10);
    if (!Number.isInteger(group) || group <= 1) continue;
    if (line.startsWith("+")) groups.add(group);
    else if (line.startsWith("-")) groups.delete(group);
  }
});
process.stdin.on("end", killAllAndExit);
process.stdin.on("error", killAllAndExit);
