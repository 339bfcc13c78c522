import { spawn, type ChildProcess } from "node:child_process";
import { access, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CoreConnection } from "@pedelec/core-client/core-client";

// The built entry, as the native host and `pedelec start --detach` launch it.
const coreEntry = resolve(fileURLToPath(new URL("../dist/core-entry.js", import.meta.url)));
const DEADLINE_MS = 15_000;
const ORIGIN = "http://127.0.0.1:9";

let home: string;
beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), "pedelec-core-log-"));
});
afterEach(async () => {
  await rm(home, { recursive: true, force: true });
});

interface RunningProcess {
  child: ChildProcess;
  stderr: () => string;
  exited: Promise<number | null>;
}

/** Core as a detached launch runs it: stderr is not watched unless `stderr` is "pipe". */
function spawnCore(stderr: "ignore" | "pipe"): RunningProcess {
  const child = spawn(process.execPath, [coreEntry], { env: { ...process.env, PEDELEC_HOME: home }, stdio: ["ignore", "ignore", stderr] });
  let said = "";
  child.stderr?.on("data", (chunk: Buffer) => (said += chunk.toString()));
  const exited = new Promise<number | null>((resolvePromise, reject) => {
    const deadline = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`Core did not exit within ${DEADLINE_MS} ms`));
    }, DEADLINE_MS);
    child.on("exit", (code) => {
      clearTimeout(deadline);
      resolvePromise(code);
    });
  });
  return { child, stderr: () => said, exited };
}

async function connectWhenListening(): Promise<CoreConnection> {
  const deadline = Date.now() + DEADLINE_MS;
  for (;;) {
    const socketPath = join(home, "run", "core.sock");
    const connection = await access(socketPath).then(
      () => CoreConnection.open(socketPath).catch(() => undefined),
      () => undefined,
    );
    if (connection !== undefined) return connection;
    if (Date.now() > deadline) throw new Error("Core did not listen in time");
    await new Promise((resolvePromise) => setTimeout(resolvePromise, 10));
  }
}

async function coreLog(): Promise<Record<string, unknown>[]> {
  const text = await readFile(join(home, "logs", "core.log"), "utf8").catch(() => "");
  return text
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

async function waitForLogLine(message: string): Promise<Record<string, unknown>[]> {
  const deadline = Date.now() + DEADLINE_MS;
  for (;;) {
    const lines = await coreLog();
    if (lines.some((line) => line.message === message)) return lines;
    if (Date.now() > deadline) throw new Error(`core.log has no "${message}" line: ${JSON.stringify(lines)}`);
    await new Promise((resolvePromise) => setTimeout(resolvePromise, 10));
  }
}

describe("Core's log file", () => {
  it("is written by Core itself, in the keys its readers use, once Core has started in the background and at exit", async () => {
    const core = spawnCore("ignore");
    const connection = await connectWhenListening();
    try {
      await connection.request("ping", {});
      // A request that needs the background start, which opens the log file.
      await connection.request("getSettings", {}, ORIGIN);
      const running = await waitForLogLine("Core listening");
      expect(running.find((line) => line.message === "Core listening")).toMatchObject({
        level: "info",
        pid: core.child.pid,
        socket: join(home, "run", "core.sock"),
      });
      await connection.request("shutdown", {});
    } finally {
      connection.close();
    }
    expect(await core.exited).toBe(0);

    const lines = await coreLog();
    expect(lines.map((line) => line.message)).toEqual(expect.arrayContaining(["Core listening", "Core stopping", "Core stopped"]));
    for (const line of lines) {
      expect(line).toMatchObject({
        time: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        level: expect.stringMatching(/^(debug|info|warn|error|fatal)$/),
        message: expect.any(String),
        pid: core.child.pid,
      });
    }
    const times = lines.map((line) => Date.parse(line.time as string));
    expect(times).toEqual([...times].sort((first, second) => first - second));
  });

  it("has every line of a Core stopped right after its first ping, as the start benchmark stops it", async () => {
    const core = spawnCore("ignore");
    const connection = await connectWhenListening();
    await connection.request("ping", {});
    await connection.request("shutdown", {}).finally(() => connection.close());
    expect(await core.exited).toBe(0);
    expect((await coreLog()).map((line) => line.message)).toEqual(expect.arrayContaining(["Core listening", "Core stopping", "Core stopped"]));
  });

  it("also holds the line of a second Core that its lock refuses", async () => {
    const first = spawnCore("ignore");
    const connection = await connectWhenListening();
    const second = spawnCore("ignore");
    expect(await second.exited).toBe(1);
    await connection.request("shutdown", {}).finally(() => connection.close());
    expect(await first.exited).toBe(0);

    const lines = await coreLog();
    const refused = lines.filter((line) => line.pid === second.child.pid);
    expect(refused).toEqual([
      expect.objectContaining({ level: "fatal", message: expect.stringContaining("already running"), code: "IPC_UNAVAILABLE" }),
    ]);
    expect(lines.filter((line) => line.pid === first.child.pid).map((line) => line.message)).toEqual(
      expect.arrayContaining(["Core listening", "Core stopped"]),
    );
  });

  it("also writes its lines to stderr when a parent reads it there", async () => {
    const core = spawnCore("pipe");
    const connection = await connectWhenListening();
    try {
      await connection.request("getSettings", {}, ORIGIN);
      await connection.request("shutdown", {});
    } finally {
      connection.close();
    }
    expect(await core.exited).toBe(0);
    const mirrored = core
      .stderr()
      .split("\n")
      .filter((line) => line.startsWith("{"))
      .map((line) => (JSON.parse(line) as { message: string }).message);
    expect(mirrored).toEqual(expect.arrayContaining(["Core listening", "Core stopped"]));
    // Each line once on stderr, though the early ones were kept and written to the file later.
    expect(mirrored.filter((message) => message === "Core listening")).toHaveLength(1);
    expect((await coreLog()).filter((line) => line.message === "Core listening")).toHaveLength(1);
  });
});
