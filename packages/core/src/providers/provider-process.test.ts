import { readFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { readProcessStat } from "../process-stat.js";
import { runProviderProcess, type ProviderProcessOptions } from "./provider-process.js";

const node = process.execPath;
const baseEnv: Record<string, string> = { PATH: process.env.PATH ?? "/usr/bin:/bin" };

let workspace: string;
beforeEach(async () => {
  workspace = await mkdtemp(path.join(tmpdir(), "pedelec-process-"));
});
afterEach(async () => {
  await rm(workspace, { recursive: true, force: true });
});

function run(script: string, overrides: Partial<ProviderProcessOptions> = {}) {
  const lines: string[] = [];
  const dropped: number[] = [];
  const result = runProviderProcess({
    executablePath: node,
    args: ["-e", script],
    cwd: workspace,
    env: baseEnv,
    stdin: "",
    signal: new AbortController().signal,
    onStdoutLine: (line) => lines.push(line),
    onStdoutLineDropped: (size) => dropped.push(size),
    ...overrides,
  });
  return { result, lines, dropped };
}

/** Gone, or a zombie nobody reaps yet: either way it runs no more. */
function isGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return true;
  }
  const stat = readProcessStat(pid);
  return stat === null || stat.state === "Z";
}

async function waitFor(condition: () => boolean, deadlineMs: number): Promise<boolean> {
  const deadline = Date.now() + deadlineMs;
  while (Date.now() < deadline) {
    if (condition()) return true;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return condition();
}

describe("runProviderProcess", () => {
  it("passes the prompt on stdin, the cwd and exactly the given env, and splits stdout into lines", async () => {
    const script = `
      let input = "";
      process.stdin.on("data", (chunk) => (input += chunk));
      process.stdin.on("end", () => {
        process.stdout.write("cwd=" + process.cwd() + "\\r\\n");
        process.stdout.write("prompt=" + input + "\\n");
        process.stdout.write("env=" + Object.keys(process.env).filter((key) => key.startsWith("PEDELEC") || key === "HOME").join(",") + "\\n");
        process.stderr.write("warning\\n");
        process.exit(3);
      });`;
    const { result, lines } = run(script, { stdin: "hello\u00e9", env: { ...baseEnv, PEDELEC_THREAD_ID: "t-1" } });
    expect(await result).toEqual({
      exitCode: 3,
      signal: null,
      stderr: "warning\n",
      stderrTruncated: false,
      spawnError: null,
      droppedLineCount: 0,
    });
    const { realpath } = await import("node:fs/promises");
    expect(lines).toEqual([`cwd=${await realpath(workspace)}`, "prompt=hello\u00e9", "env=PEDELEC_THREAD_ID"]);
  });

  it("caps stderr at 64 KiB and says so", async () => {
    const { result } = run(`process.stderr.write("x".repeat(100 * 1024)); process.stderr.write("y".repeat(1024));`);
    const settled = await result;
    expect(settled.stderr).toHaveLength(64 * 1024);
    expect(settled.stderr).not.toContain("y");
    expect(settled.stderrTruncated).toBe(true);
    expect(settled.exitCode).toBe(0);
  });

  it("drops a stdout line over the cap and keeps the lines around it", async () => {
    const { result, lines, dropped } = run(
      `process.stdout.write("before\\n" + "a".repeat(1536 * 1024)); setTimeout(() => process.stdout.write("b".repeat(10) + "\\nafter\\n"), 10);`,
      { maxLineBytes: 1024 * 1024 },
    );
    const settled = await result;
    expect(lines).toEqual(["before", "after"]);
    expect(dropped).toEqual([1536 * 1024 + 10]);
    expect(settled.droppedLineCount).toBe(1);
  });

  it("does not fail when the child exits without reading a large prompt", async () => {
    const { result } = run(`process.exit(0)`, { stdin: "p".repeat(8 * 1024 * 1024) });
    expect((await result).exitCode).toBe(0);
  });

  it("settles with a spawn error for a missing or non-executable program", async () => {
    const missing = await run("", { executablePath: path.join(workspace, "no-such-cli"), args: [] }).result;
    expect(missing.spawnError?.code).toBe("ENOENT");
    expect(missing.exitCode).toBeNull();

    const plain = path.join(workspace, "plain-file");
    await writeFile(plain, "#!/bin/sh\necho hi\n", { mode: 0o644 });
    const notExecutable = await run("", { executablePath: plain, args: [] }).result;
    expect(notExecutable.spawnError?.code).toBe("EACCES");
  });

  it("kills the whole process group on abort, grandchild included", async () => {
    const controller = new AbortController();
    const lines: string[] = [];
    let announce: (pid: number) => void = () => {};
    const grandchild = new Promise<number>((resolve) => (announce = resolve));
    const result = runProviderProcess({
      executablePath: "/bin/sh",
      args: ["-c", "sleep 30 & echo $!; wait"],
      cwd: workspace,
      env: baseEnv,
      stdin: "",
      signal: controller.signal,
      onStdoutLine: (line) => {
        lines.push(line);
        announce(Number(line));
      },
    });
    const sleepPid = await grandchild;
    expect(Number.isInteger(sleepPid) && sleepPid > 0).toBe(true);
    expect(isGone(sleepPid)).toBe(false);
    controller.abort();
    const settled = await result;
    expect(settled.signal).toBe("SIGTERM");
    expect(await waitFor(() => isGone(sleepPid), 3_000)).toBe(true);
  });

  it("escalates to SIGKILL when the group ignores SIGTERM", async () => {
    const controller = new AbortController();
    let ready: () => void = () => {};
    const started = new Promise<void>((resolve) => (ready = resolve));
    const startedAt = Date.now();
    const result = runProviderProcess({
      executablePath: node,
      args: ["-e", `process.on("SIGTERM", () => {}); console.log("ready"); setInterval(() => {}, 1000);`],
      cwd: workspace,
      env: baseEnv,
      stdin: "",
      signal: controller.signal,
      killGraceMs: 200,
      onStdoutLine: () => ready(),
    });
    await started;
    controller.abort();
    const settled = await result;
    expect(settled.signal).toBe("SIGKILL");
    expect(Date.now() - startedAt).toBeLessThan(5_000);
  });

  it("does not start anything when the signal is already aborted", async () => {
    const controller = new AbortController();
    controller.abort();
    const lines: string[] = [];
    const settled = await runProviderProcess({
      executablePath: node,
      args: ["-e", `console.log("ran")`],
      cwd: workspace,
      env: baseEnv,
      stdin: "",
      signal: controller.signal,
      onStdoutLine: (line) => lines.push(line),
    });
    expect(settled).toMatchObject({ exitCode: null, signal: null, spawnError: null });
    expect(lines).toEqual([]);
  });

  it("stops reading when a background grandchild keeps stdout open after the leader exited", async () => {
    const lines: string[] = [];
    const startedAt = Date.now();
    const settled = await runProviderProcess({
      executablePath: "/bin/sh",
      args: ["-c", "echo leader-done; (trap '' TERM; exec sleep 5) & echo $! > grandchild.pid; exit 0"],
      cwd: workspace,
      env: baseEnv,
      stdin: "",
      signal: new AbortController().signal,
      drainGraceMs: 300,
      onStdoutLine: (line) => lines.push(line),
    });
    expect(settled.exitCode).toBe(0);
    expect(lines).toEqual(["leader-done"]);
    expect(Date.now() - startedAt).toBeLessThan(3_000);
    const pid = Number(readFileSync(path.join(workspace, "grandchild.pid"), "utf8"));
    process.kill(pid, "SIGKILL");
  });
});
