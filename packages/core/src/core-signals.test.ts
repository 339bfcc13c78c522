import { spawn, type ChildProcess } from "node:child_process";
import { access, mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CoreConnection } from "@pedelec/core-client/core-client";

// The built entry, as the native host and `pedelec start --detach` launch it.
const coreEntry = resolve(fileURLToPath(new URL("../dist/core-entry.js", import.meta.url)));
const EXIT_DEADLINE_MS = 10_000;

let home: string;

beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), "pedelec-core-signals-"));
});
afterEach(async () => {
  await rm(home, { recursive: true, force: true });
});

function spawnCore(): { child: ChildProcess; exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }> } {
  const child = spawn(process.execPath, [coreEntry], { env: { ...process.env, PEDELEC_HOME: home }, stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>((resolvePromise, reject) => {
    const deadline = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`Core did not exit within ${EXIT_DEADLINE_MS} ms; it said: ${stderr}`));
    }, EXIT_DEADLINE_MS);
    child.on("exit", (code, signal) => {
      clearTimeout(deadline);
      resolvePromise({ code, signal, stderr });
    });
  });
  return { child, exited };
}

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}

/** Resolves once Core answers on its socket, or rejects at the deadline. */
async function pingWhenListening(socketPath: string, deadlineMs: number): Promise<unknown> {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    try {
      const connection = await CoreConnection.open(socketPath);
      try {
        return await connection.request("ping", {});
      } finally {
        connection.close();
      }
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolvePromise) => setTimeout(resolvePromise, 10));
    }
  }
}

describe("Core and SIGTERM during start-up", () => {
  it("leaves no socket or lock when stopped at any point of start-up, and the next Core starts cleanly", async () => {
    const runDir = join(home, "run");
    const socketPath = join(runDir, "core.sock");
    // How long start-up takes here, so the signals below land all over it.
    const timing = spawnCore();
    const started = performance.now();
    await pingWhenListening(socketPath, EXIT_DEADLINE_MS);
    const startUpMs = performance.now() - started;
    timing.child.kill("SIGTERM");
    expect(await timing.exited).toMatchObject({ code: 0 });

    const outcomes: string[] = [];
    const attempts = 20;
    for (let attempt = 0; attempt < attempts; attempt += 1) {
      const { child, exited } = spawnCore();
      const delayMs = attempt === 0 ? 0 : startUpMs * (0.3 + attempt / attempts);
      if (delayMs === 0) child.kill("SIGTERM");
      else setTimeout(() => child.kill("SIGTERM"), delayMs);
      const { code, signal, stderr } = await exited;
      // Killed before the handler existed (nothing was created yet), or stopped by it.
      expect(code === 0 || signal === "SIGTERM", `attempt ${attempt} exited with ${code ?? signal}: ${stderr}`).toBe(true);
      outcomes.push(
        signal ?? (stderr.includes("Core stopped") ? "stopped" : stderr.includes("start-up stopped") ? "start-up stopped" : String(code)),
      );
      expect(await exists(socketPath), `socket left after attempt ${attempt}`).toBe(false);
      expect(await exists(join(runDir, "core.lock")), `lock left after attempt ${attempt}`).toBe(false);
    }
    console.log(`start-up ${startUpMs.toFixed(0)} ms; outcomes of SIGTERM at spread delays: ${outcomes.join(", ")}`);
    // Some signals must have landed while Core was running its handler, or the test proved nothing.
    expect(outcomes.filter((outcome) => outcome !== "SIGTERM").length).toBeGreaterThan(0);

    const fresh = spawnCore();
    await expect(pingWhenListening(socketPath, EXIT_DEADLINE_MS)).resolves.toMatchObject({ home, sessions: 0 });
    fresh.child.kill("SIGTERM");
    const { code, stderr } = await fresh.exited;
    expect(code).toBe(0);
    expect(stderr).not.toMatch(/"level":"(warn|error)"/);
    expect(await readdir(runDir)).not.toEqual(expect.arrayContaining(["core.sock"]));
    expect(await exists(join(runDir, "core.lock"))).toBe(false);
  }, 90_000);
});
