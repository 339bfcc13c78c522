// Bundles the native host's entry (scripts/bundle-node-entry.mjs): Chrome starts the host when a page first asks for
// the agent, and the page waits while it loads. The package exports the bundle as `@pedelec/native-host/native-host-entry`.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { bundleNodeEntry } from "../../../scripts/bundle-node-entry.mjs";

const REHEARSAL_DEADLINE_MS = 60_000;

/** One Native Messaging frame, as Chrome writes it: a 4-byte little-endian length, then UTF-8 JSON. */
function nativeFrame(message) {
  const body = Buffer.from(JSON.stringify(message));
  const header = Buffer.alloc(4);
  header.writeUInt32LE(body.length);
  return Buffer.concat([header, body]);
}

/**
 * Starts the host as Chrome does, against a stand-in Core socket (so it starts no Core), sends it one page request to
 * forward, and closes its stdin once the request reached the socket; the host then exits.
 */
async function rehearse(program) {
  const home = await mkdtemp(join(tmpdir(), "pedelec-host-rehearsal-"));
  await mkdir(join(home, "run"), { mode: 0o700 });
  let forwarded;
  const requestForwarded = new Promise((resolve) => (forwarded = resolve));
  const core = createServer((socket) => {
    socket.on("error", () => undefined);
    socket.once("data", () => forwarded());
  });
  core.listen(join(home, "run", "core.sock"));
  await once(core, "listening");
  const host = spawn(process.execPath, [program, `chrome-extension://${"a".repeat(32)}/`], {
    env: { ...process.env, PEDELEC_HOME: home },
    stdio: ["pipe", "ignore", "pipe"],
  });
  let output = "";
  host.stderr.on("data", (chunk) => (output += chunk));
  const exited = once(host, "exit");
  try {
    host.stdin.write(nativeFrame({ kind: "request", id: "rehearsal", type: "listProviders", origin: "http://127.0.0.1:5173", payload: {} }));
    const timedOut = delay(REHEARSAL_DEADLINE_MS, undefined, { ref: false }).then(() => "timed out");
    if ((await Promise.race([requestForwarded, timedOut])) === "timed out")
      throw new Error(`the host forwarded nothing in its rehearsal:\n${output}`);
    host.stdin.end();
    const [code] = await Promise.race([exited, timedOut.then(() => ["a timeout"])]);
    if (code !== 0) throw new Error(`the host's rehearsal ended with ${code}:\n${output}`);
  } finally {
    if (host.exitCode === null && host.signalCode === null) host.kill("SIGKILL");
    core.close();
    await rm(home, { recursive: true, force: true });
  }
}

await bundleNodeEntry({ packageDir: fileURLToPath(new URL("..", import.meta.url)), entry: "dist/native-host-entry.js", rehearse });
