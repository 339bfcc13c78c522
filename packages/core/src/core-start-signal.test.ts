import { access, mkdir, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CoreConnection } from "@pedelec/core-client/core-client";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { startCore, type RunningCore } from "./core-daemon.js";
import type { LogRecord, LogSink } from "./logging/log-record.js";
import { setLogSink } from "./logger.js";

let home: string;
let env: NodeJS.ProcessEnv;
let core: RunningCore | undefined;
let logged: LogRecord[];
let previousSink: LogSink;

beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), "pedelec-core-start-"));
  env = { ...process.env, PEDELEC_HOME: home };
  logged = [];
  previousSink = setLogSink({ write: (record) => logged.push(record) });
});
afterEach(async () => {
  await core?.stop();
  core = undefined;
  setLogSink(previousSink);
  await rm(home, { recursive: true, force: true });
});

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}

function messages(): string[] {
  return logged.map((record) => record.message);
}

describe("Core's start-up and its undo", () => {
  it("starts nothing when its signal fired before start-up, and rejects with the signal's reason", async () => {
    const stopping = new AbortController();
    const reason = new PedelecError("IPC_UNAVAILABLE", "Core was asked to stop");
    stopping.abort(reason);
    await expect(startCore(env, { signal: stopping.signal })).rejects.toBe(reason);
    expect(await exists(join(home, "run"))).toBe(false);
    expect(messages()).toEqual(["Core start-up stopped"]);
  });

  it("releases the lock when the socket cannot listen, with IPC_UNAVAILABLE", async () => {
    // A folder where the socket goes: not a stale socket file, so it stays, and listening there fails.
    await mkdir(join(home, "run", "core.sock"), { recursive: true });
    await expect(startCore(env)).rejects.toMatchObject({ code: "IPC_UNAVAILABLE", message: expect.stringContaining("Core could not listen") });
    expect(await exists(join(home, "run", "core.lock"))).toBe(false);
    expect(messages()).not.toContain("Core listening");
    // Nothing of the failed start is left in the way of the next.
    await rm(join(home, "run", "core.sock"), { recursive: true });
    core = await startCore(env);
    expect(messages()).toContain("Core listening");
  });

  it("leaves the running Core's lock and socket alone when a second Core is refused", async () => {
    core = await startCore(env);
    await expect(startCore(env)).rejects.toMatchObject({ code: "IPC_UNAVAILABLE", details: { alreadyRunning: true, pid: process.pid } });
    expect(await readFile(join(home, "run", "core.lock"), "utf8")).toBe(String(process.pid));
    const connection = await CoreConnection.open(core.paths.socketPath);
    try {
      await expect(connection.request("ping", {})).resolves.toMatchObject({ pid: process.pid, home });
    } finally {
      connection.close();
    }
  });

  it("stops once it runs when its signal fires, removing the socket and the lock", async () => {
    const stopping = new AbortController();
    const running = await startCore(env, { signal: stopping.signal });
    core = running;
    expect(messages()).toContain("Core listening");
    stopping.abort(new PedelecError("IPC_UNAVAILABLE", "Core was asked to stop"));
    await running.stopped;
    expect(await exists(running.paths.socketPath)).toBe(false);
    expect(await exists(join(running.paths.runDir, "core.lock"))).toBe(false);
    expect(messages()).toEqual(expect.arrayContaining(["Core stopping", "Core stopped"]));
    expect(messages()).not.toContain("Core start-up stopped");
  });
});
