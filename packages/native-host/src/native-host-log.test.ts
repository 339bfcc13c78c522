import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdir, mkdtemp, readFile, rm } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, expect, it } from "vitest";

// The entry as `tsc -b` builds it (the bundle Chrome starts is made from it).
const entry = fileURLToPath(new URL("../dist/native-host-entry.js", import.meta.url));

let home: string;
/** A stand-in for Core's socket, so the hosts find "Core" running and start none. */
let standInCore: Server;
beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), "pedelec-host-log-"));
  await mkdir(join(home, "run"), { mode: 0o700 });
  standInCore = createServer((socket) => socket.on("error", () => undefined));
  standInCore.listen(join(home, "run", "core.sock"));
  await once(standInCore, "listening");
});
afterEach(async () => {
  standInCore.close();
  await rm(home, { recursive: true, force: true });
});

/** A host started as Chrome starts it, whose stdin closes after `openMs`. */
function runHost(openMs: number): Promise<{ pid: number; code: number | null }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [entry, "chrome-extension://jipdjobnmfeagcdooiopbbkmbpgbkdhe/"], {
      env: { ...process.env, PEDELEC_HOME: home },
      stdio: ["pipe", "ignore", "ignore"],
    });
    const deadline = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error("the host did not exit within 10 s"));
    }, 10_000);
    child.on("close", (code) => {
      clearTimeout(deadline);
      resolve({ pid: child.pid!, code });
    });
    setTimeout(() => child.stdin!.end(), openMs);
  });
}

it("writes native-host.log in the keys its readers use, whether the host exits before or after loading its file logger, two at once", async () => {
  // One leaves before its file logger loads (50 ms after start), one after.
  const [quick, slow] = await Promise.all([runHost(0), runHost(400)]);
  expect([quick.code, slow.code]).toEqual([0, 0]);
  const lines = (await readFile(join(home, "logs", "native-host.log"), "utf8"))
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  for (const host of [quick, slow]) {
    const own = lines.filter((line) => line.pid === host.pid);
    expect(
      own.map((line) => line.message),
      JSON.stringify(own),
    ).toEqual(["native host started", "stdin closed; exiting"]);
    expect(own[0]).toMatchObject({ level: "info", caller: "chrome-extension://jipdjobnmfeagcdooiopbbkmbpgbkdhe/" });
    for (const line of own) expect(line.time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  }
});
