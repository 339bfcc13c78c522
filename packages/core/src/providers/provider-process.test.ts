import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { readProcessEntry } from "@pedelec/script-runtime/process-table";
import { isProcessTag, PROCESS_TAG_VARIABLE } from "../process-tag.js";
import { isGone, pidFromFile, TestProcesses, waitUntil } from "../testing/test-processes.js";
import { newProcessTag, runProviderProcess, type ProviderProcessOptions } from "./provider-process.js";

const node = process.execPath;
const baseEnv: Record<string, string> = { PATH: process.env.PATH ?? "/usr/bin:/bin" };

const hasProc = existsSync("/proc/self/environ");

let workspace: string;
const started = new TestProcesses();
beforeEach(async () => {
  workspace = await mkdtemp(path.join(tmpdir(), "pedelec-process-"));
});
afterEach(async () => {
  await started.endAll();
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

/** The pid `/bin/sh` wrote into `name` in the workspace, remembered so the test ends it whatever happens. */
async function announcedPid(name: string): Promise<number> {
  return started.add(await pidFromFile(path.join(workspace, name)));
}

/** A shell command that starts `command` in a session and process group of its own and writes its pid to `pidFile`. */
function inOwnSession(pidFile: string, command = "exec sleep 300"): string {
  return `setsid /bin/sh -c 'echo $$ > ${pidFile}; ${command}'`;
}

describe("runProviderProcess", () => {
  it("passes the prompt on stdin, the cwd and exactly the given env, and splits stdout into lines", async () => {
    const script = `
      let input = "";
      process.stdin.on("data", (chunk) => (input += chunk));
      process.stdin.on("end", () => {
        process.stdout.write("cwd=" + process.cwd() + "\\r\\n");
        process.stdout.write("prompt=" + input + "\\n");
        process.stdout.write("env=" + Object.keys(process.env).filter((key) => key.startsWith("PEDELEC") || key === "HOME").sort().join(",") + "\\n");
        process.stdout.write("tag=" + process.env.PEDELEC_PROCESS_TAG + "\\n");
        process.stderr.write("warning\\n");
        process.exit(3);
      });`;
    const tags: string[] = [];
    const { result, lines } = run(script, {
      stdin: "hello\u00e9",
      // A tag given by the caller is replaced by the run's own.
      env: { ...baseEnv, PEDELEC_THREAD_ID: "t-1", [PROCESS_TAG_VARIABLE]: "0".repeat(32) },
      onSpawned: (_pid, tag) => tags.push(tag),
    });
    expect(await result).toEqual({
      exitCode: 3,
      signal: null,
      stderr: "warning\n",
      stderrTruncated: false,
      spawnError: null,
      droppedLineCount: 0,
    });
    const { realpath } = await import("node:fs/promises");
    expect(tags).toHaveLength(1);
    expect(isProcessTag(tags[0]!)).toBe(true);
    expect(tags[0]).not.toBe("0".repeat(32));
    expect(lines).toEqual([`cwd=${await realpath(workspace)}`, "prompt=hello\u00e9", "env=PEDELEC_PROCESS_TAG,PEDELEC_THREAD_ID", `tag=${tags[0]}`]);
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
    const sleepPid = started.add(await grandchild);
    expect(Number.isInteger(sleepPid) && sleepPid > 0).toBe(true);
    expect(isGone(sleepPid)).toBe(false);
    controller.abort();
    const settled = await result;
    expect(settled.signal).toBe("SIGTERM");
    expect(await waitUntil(() => isGone(sleepPid), 3_000)).toBe(true);
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

  it("stops reading when an untagged background grandchild keeps stdout open after the leader exited", async () => {
    // The grandchild dropped the tag from its environment, so only the drain grace bounds the run.
    const lines: string[] = [];
    const startedAt = Date.now();
    const settled = await runProviderProcess({
      executablePath: "/bin/sh",
      args: [
        "-c",
        `echo leader-done; env -u ${PROCESS_TAG_VARIABLE} /bin/sh -c 'echo $$ > grandchild.pid; exec sleep 300' &
        while [ ! -s grandchild.pid ]; do sleep 0.02; done; exit 0`,
      ],
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
    const pid = await announcedPid("grandchild.pid");
    expect(isGone(pid)).toBe(false);
  });

  it.skipIf(!hasProc)("on cancel ends a grandchild in a session of its own that ignores SIGTERM", async () => {
    const controller = new AbortController();
    let leader = 0;
    const result = runProviderProcess({
      executablePath: "/bin/sh",
      args: ["-c", `${inOwnSession("grandchild.pid", `trap "" TERM; exec sleep 300`)} & wait`],
      cwd: workspace,
      env: baseEnv,
      stdin: "",
      signal: controller.signal,
      killGraceMs: 300,
      onStdoutLine: () => {},
      onSpawned: (pid) => (leader = started.add(pid)),
    });
    const grandchild = await announcedPid("grandchild.pid");
    // It left the CLI's process group (and session): signalling the group does not reach it.
    expect(await waitUntil(() => readProcessEntry(grandchild)?.command === "sleep", 5_000)).toBe(true);
    expect(readProcessEntry(grandchild)?.pgrp).toBe(grandchild);
    expect(leader).toBeGreaterThan(1);
    controller.abort();
    const settled = await result;
    expect(settled.signal).toBe("SIGTERM");
    // Settled only once nothing tagged is left.
    expect(isGone(grandchild)).toBe(true);
    expect(isGone(leader)).toBe(true);
  });

  it.skipIf(!hasProc)(
    "ends a background grandchild in its own session left by a CLI that exited 0, without waiting out the drain grace",
    async () => {
      // The CLI is node, starting its tool detached (setsid), as Claude Code and OpenCode do; the tool holds stdout.
      const script = `
      const { spawn } = require("node:child_process");
      const tool = spawn("/bin/sh", ["-c", "echo $$ > grandchild.pid; exec sleep 300"], { detached: true, stdio: ["ignore", "inherit", "inherit"] });
      tool.unref();
      console.log("answer");
      setTimeout(() => process.exit(0), 100);`;
      const startedAt = Date.now();
      const { result, lines } = run(script, { drainGraceMs: 5_000 });
      const settled = await result;
      const elapsed = Date.now() - startedAt;
      const grandchild = await announcedPid("grandchild.pid");
      expect(settled.exitCode).toBe(0);
      expect(lines).toEqual(["answer"]);
      expect(isGone(grandchild)).toBe(true);
      expect(elapsed).toBeLessThan(4_000);
    },
  );

  it.skipIf(!hasProc)("ends the tool of a CLI that crashed (killed by SIGKILL) and orphaned it", async () => {
    const settled = await runProviderProcess({
      executablePath: "/bin/sh",
      args: ["-c", `${inOwnSession("grandchild.pid")} & while [ ! -s grandchild.pid ]; do sleep 0.02; done; kill -KILL $$`],
      cwd: workspace,
      env: baseEnv,
      stdin: "",
      signal: new AbortController().signal,
      onStdoutLine: () => {},
    });
    const grandchild = await announcedPid("grandchild.pid");
    expect(settled.signal).toBe("SIGKILL");
    expect(isGone(grandchild)).toBe(true);
  });

  it.skipIf(!hasProc)(
    "ends a stdout-holding grandchild that ignores SIGTERM within the kill grace, the drain grace bounding the reading",
    async () => {
      const startedAt = Date.now();
      const settled = await runProviderProcess({
        executablePath: "/bin/sh",
        args: ["-c", `echo done; ${inOwnSession("grandchild.pid", `trap "" TERM; exec sleep 300`)} & sleep 0.2; exit 0`],
        cwd: workspace,
        env: baseEnv,
        stdin: "",
        signal: new AbortController().signal,
        drainGraceMs: 300,
        killGraceMs: 1_000,
        onStdoutLine: () => {},
      });
      const elapsed = Date.now() - startedAt;
      const grandchild = await announcedPid("grandchild.pid");
      expect(settled.exitCode).toBe(0);
      expect(isGone(grandchild)).toBe(true);
      expect(elapsed).toBeGreaterThanOrEqual(1_000);
      expect(elapsed).toBeLessThan(4_000);
    },
  );

  it.skipIf(!hasProc)("spares processes with the same variable set to another value, or the tag under another name", async () => {
    const bystander = spawn("sleep", ["300"], {
      env: { ...baseEnv, [PROCESS_TAG_VARIABLE]: newProcessTag() },
      detached: true,
      stdio: "ignore",
    });
    bystander.unref();
    started.add(bystander.pid!);
    const settled = await runProviderProcess({
      executablePath: "/bin/sh",
      args: [
        "-c",
        [
          `${PROCESS_TAG_VARIABLE}="\${${PROCESS_TAG_VARIABLE}}0" ${inOwnSession("longer.pid")} &`,
          `env -u ${PROCESS_TAG_VARIABLE} OTHER_${PROCESS_TAG_VARIABLE}="$${PROCESS_TAG_VARIABLE}" ${inOwnSession("renamed.pid")} &`,
          `${inOwnSession("tagged.pid")} &`,
          "while [ ! -s longer.pid ] || [ ! -s renamed.pid ] || [ ! -s tagged.pid ]; do sleep 0.05; done; exit 0",
        ].join("\n"),
      ],
      cwd: workspace,
      env: baseEnv,
      stdin: "",
      signal: new AbortController().signal,
      drainGraceMs: 300,
      onStdoutLine: () => {},
    });
    expect(settled.exitCode).toBe(0);
    const [longer, renamed, tagged] = await Promise.all(["longer.pid", "renamed.pid", "tagged.pid"].map(announcedPid));
    expect(isGone(tagged!)).toBe(true);
    for (const pid of [longer!, renamed!, bystander.pid!]) expect(isGone(pid)).toBe(false);
  });
});
