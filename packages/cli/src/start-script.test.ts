import { spawn, type ChildProcess } from "node:child_process";
import { access, mkdir, mkdtemp, rm } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

// `npm start` is scripts/start.mjs; run here with --skip-build against the build already in the tree, in a temporary
// home (browser folders) and PEDELEC_HOME, so it registers and starts nothing of the real user's.
const startScript = fileURLToPath(new URL("../../../scripts/start.mjs", import.meta.url));
const standInDir = fileURLToPath(new URL("../../../test/stand-ins/claude", import.meta.url));

let root: string;
let home: string;
let pedelecHome: string;
let child: ChildProcess | undefined;
let blocker: Server | undefined;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "pedelec-start-"));
  home = join(root, "home");
  pedelecHome = join(root, "pedelec-home");
  await mkdir(home);
});
afterEach(async () => {
  if (child && child.exitCode === null && child.signalCode === null) {
    child.kill("SIGINT");
    await new Promise((resolve) => child!.once("close", resolve));
  }
  child = undefined;
  await new Promise((resolve) => (blocker ? blocker.close(resolve) : resolve(undefined)));
  blocker = undefined;
  await rm(root, { recursive: true, force: true });
});

function start(env: NodeJS.ProcessEnv) {
  child = spawn(process.execPath, [startScript, "--skip-build"], {
    env: { ...process.env, HOME: home, PEDELEC_HOME: pedelecHome, PEDELEC_PROVIDER_PATH: join(root, "no-agents"), ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
  const exited = new Promise<number | null>((resolve) => child!.once("close", (code) => resolve(code)));
  const output = () => ({ stdout, stderr });
  /** Resolves once stdout holds `text`; rejects at the deadline or when the script exits first. */
  const printed = (text: string, timeoutMs = 60_000) =>
    new Promise<void>((resolve, reject) => {
      const deadline = setTimeout(() => reject(new Error(`no ${JSON.stringify(text)} within ${timeoutMs} ms:\n${stdout}\n${stderr}`)), timeoutMs);
      const check = () => {
        if (stdout.includes(text)) {
          clearTimeout(deadline);
          resolve();
        }
      };
      child!.stdout!.on("data", check);
      void exited.then(() => {
        clearTimeout(deadline);
        if (stdout.includes(text)) resolve();
        else reject(new Error(`exited before printing ${JSON.stringify(text)}:\n${stdout}\n${stderr}`));
      });
    });
  return { exited, output, printed };
}

async function occupiedPort(): Promise<number> {
  blocker = createServer();
  await new Promise<void>((resolve) => blocker!.listen(0, "127.0.0.1", resolve));
  return (blocker.address() as { port: number }).port;
}

describe("npm start (scripts/start.mjs)", () => {
  it("reports a busy demo port with what to do and exits 1, before building, registering or starting anything", async () => {
    const port = await occupiedPort();
    const run = start({ PORT: String(port), NOTES_PORT: "0" });
    expect(await run.exited).toBe(1);
    expect(run.output().stderr).toContain(`Port ${port} on 127.0.0.1, where the to-do board demo is served, is in use`);
    expect(run.output().stderr).toContain(`PORT=<port> npm start`);
    expect(run.output().stdout).toBe("");
    await expect(access(pedelecHome)).rejects.toThrow();
    await expect(access(join(home, ".config"))).rejects.toThrow();
  });

  it("reports the React example's busy port the same way, naming NOTES_PORT", async () => {
    const port = await occupiedPort();
    const run = start({ PORT: "0", NOTES_PORT: String(port) });
    expect(await run.exited).toBe(1);
    expect(run.output().stderr).toContain(`Port ${port} on 127.0.0.1, where the React notes editor is served, is in use`);
    expect(run.output().stderr).toContain("NOTES_PORT=<port> npm start");
  });

  it("refuses a port that is not a number, and the same port for both demos, with exit 2", async () => {
    const bad = start({ PORT: "http" });
    expect(await bad.exited).toBe(2);
    expect(bad.output().stderr).toContain("PORT=http is not a port number");
    const same = start({ PORT: "5999", NOTES_PORT: "5999" });
    expect(await same.exited).toBe(2);
    expect(same.output().stderr).toContain("both 5999");
  });

  it("says it is not ready and which agent to install when none is available; Ctrl+C stops the demos and Core", async () => {
    await mkdir(join(home, ".config", "chromium"), { recursive: true });
    const run = start({ PORT: "0", NOTES_PORT: "0", PATH: "/usr/bin:/bin" });
    await run.printed("Ctrl+C stops the demos and Core.");
    const { stdout } = run.output();
    expect(stdout).toContain(`Registered the Pedelec native host for Chromium: ${join(home, ".config", "chromium", "NativeMessagingHosts")}`);
    expect(stdout).toContain("✗ an agent to work with: no agent CLI is available");
    expect(stdout).toContain("npm install -g @anthropic-ai/claude-code");
    expect(stdout).toContain("Pedelec is running (see above for what is missing).");
    expect(stdout).not.toContain("Pedelec is ready.");
    expect(stdout).toMatch(/Open the demo: http:\/\/127\.0\.0\.1:\d+\//);
    await access(join(pedelecHome, "run", "core.sock"));

    child!.kill("SIGINT");
    expect(await run.exited).toBe(0);
    await expect(access(join(pedelecHome, "run", "core.sock"))).rejects.toThrow();
  });

  it("says it is ready once a browser, its host registration and an agent are there", async () => {
    await mkdir(join(home, ".config", "chromium"), { recursive: true });
    const run = start({ PORT: "0", NOTES_PORT: "0", PEDELEC_PROVIDER_PATH: standInDir, CLAUDE_CONFIG_DIR: join(root, "claude-state") });
    await run.printed("Ctrl+C stops the demos and Core.");
    expect(run.output().stdout).toContain("Pedelec is ready.");
    expect(run.output().stdout).not.toContain("✗");
  });
});
