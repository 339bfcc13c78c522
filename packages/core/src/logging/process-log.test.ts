import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { log } from "../logger.js";
import { EarlyLogBuffer } from "./early-log-buffer.js";
import type { LogRecord } from "./log-record.js";
import { ProcessLog } from "./process-log.js";
import { bundleTestProgram } from "../testing/bundle-test-program.js";

let folder: string;
beforeEach(async () => {
  folder = await mkdtemp(join(tmpdir(), "pedelec-process-log-"));
});
afterEach(async () => {
  await rm(folder, { recursive: true, force: true });
});

async function logLines(name = "core.log"): Promise<Record<string, unknown>[]> {
  const text = await readFile(join(folder, name), "utf8");
  return text
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

describe("EarlyLogBuffer", () => {
  it("hands its records on in order, and past its limit drops the oldest and says how many", () => {
    const buffer = new EarlyLogBuffer(3);
    for (let index = 0; index < 5; index += 1)
      buffer.write({ time: `2026-05-01T10:00:0${index}.000Z`, level: "info", message: `line ${index}`, fields: {} });
    const received: LogRecord[] = [];
    buffer.drainInto({ write: (record) => received.push(record) });
    expect(received.map((record) => [record.level, record.message])).toEqual([
      ["warn", "dropped the oldest log lines kept before the log file was opened"],
      ["info", "line 2"],
      ["info", "line 3"],
      ["info", "line 4"],
    ]);
    expect(received[0]!.fields).toEqual({ dropped: 2 });
    expect(buffer.size).toBe(0);
  });
});

describe("ProcessLog", () => {
  it("keeps the lines logged before start in memory, then writes them through pino with their own times, before later ones", async () => {
    const processLog = ProcessLog.open({ logsDir: folder, fileName: "core.log" });
    try {
      log("info", "Core listening", { socket: "/x/core.sock" });
      log("warn", "settings.json is not usable", { problem: "bad", apiKey: "sk-EARLY-SECRET" });
      const earlyTime = new Date().toISOString();
      // Nothing is written before the file logger starts: not even the file.
      expect(await exists(join(folder, "core.log"))).toBe(false);
      await new Promise((resolve) => setTimeout(resolve, 5));

      await processLog.start(async () => false);
      log("info", "a later line", { sessionId: "s1" });
      const lines = await logLines();
      expect(lines.map((line) => [line.level, line.message])).toEqual([
        ["info", "Core listening"],
        ["warn", "settings.json is not usable"],
        ["info", "a later line"],
      ]);
      expect(Date.parse(lines[1]!.time as string)).toBeLessThanOrEqual(Date.parse(earlyTime));
      expect(Date.parse(lines[2]!.time as string)).toBeGreaterThan(Date.parse(earlyTime));
      for (const line of lines)
        expect(line).toMatchObject({ time: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/), pid: process.pid });
      expect(lines[1]).toMatchObject({ problem: "bad", apiKey: "[redacted]" });
      expect((await stat(join(folder, "core.log"))).mode & 0o777).toBe(0o600);
    } finally {
      processLog.close();
    }
  });

  it("writes unredacted fields and debug lines once logging.debug is on", async () => {
    const processLog = ProcessLog.open({ logsDir: folder, fileName: "core.log" });
    try {
      log("debug", "an early debug line", { args: { title: "EARLY-ARGS" } });
      await processLog.start(async () => true);
      log("info", "tool call", { args: { title: "LATER-ARGS" } });
      processLog.setDebug(false);
      log("debug", "not written");
      log("info", "tool call", { args: { title: "QUIET-ARGS" } });
      const lines = await logLines();
      expect(lines.map((line) => line.message)).toEqual(["an early debug line", "tool call", "tool call"]);
      expect(lines[0]).toMatchObject({ level: "debug", args: { title: "EARLY-ARGS" } });
      expect(lines[1]).toMatchObject({ args: { title: "LATER-ARGS" } });
      expect(lines[2]).toMatchObject({ args: "[redacted]" });
    } finally {
      processLog.close();
    }
  });

  it("writes what it kept when closed before the file logger started, and gives log back its earlier sink", async () => {
    const processLog = ProcessLog.open({ logsDir: folder, fileName: "core.log" });
    log("info", "Core stopping", { token: "TOKEN-SECRET" });
    processLog.close();
    const afterClose = processLog.start(async () => false);
    await afterClose;
    expect(await logLines()).toEqual([expect.objectContaining({ level: "info", message: "Core stopping", token: "[redacted]", pid: process.pid })]);
    // A closed log no longer takes lines: they go where log wrote before (stderr in tests).
    log("info", "after close");
    expect((await logLines()).map((line) => line.message)).toEqual(["Core stopping"]);
  });
});

// Real processes, for what happens as a process ends: a normal exit before the file logger started, an uncaught
// exception, an unhandled rejection.
describe("ProcessLog as a process ends", () => {
  let programs: string;
  let program: string;
  /** The same program bundled so that pino cannot load (an ES module bundle has no `require` for pino's own). */
  let programWithoutPino: string;
  beforeAll(async () => {
    programs = await mkdtemp(join(tmpdir(), "pedelec-process-log-program-"));
    program = join(programs, "program.mjs");
    programWithoutPino = join(programs, "program-without-pino.mjs");
    const here = (file: string): string => JSON.stringify(fileURLToPath(new URL(file, import.meta.url)));
    const code = await bundleTestProgram(
      `import { log } from ${here("../logger.ts")};
import { ProcessLog } from ${here("./process-log.ts")};
const [logsDir, ending] = process.argv.slice(2);
const processLog = ProcessLog.open({ logsDir, fileName: "core.log" });
log("info", "Core listening", { socket: "/x" });
log("warn", "a tool call failed", { args: { title: "ARGS-SECRET" }, apiKey: "KEY-SECRET" });
if (ending === "started") await processLog.start(async () => false);
if (ending === "exit" || ending === "started") process.exit(3);
if (ending === "throw") setTimeout(() => { throw new Error("boom in a timer"); }, 1);
if (ending === "reject") void Promise.reject(new Error("a promise nobody awaited"));`,
      programs,
    );
    // A require for the bundle's own lazy loads (pino); named apart from the bundle's imports.
    await writeFile(program, `import { createRequire as requireFrom } from "node:module";\nconst require = requireFrom(import.meta.url);\n${code}`);
    await writeFile(programWithoutPino, code);
  });
  afterAll(async () => {
    await rm(programs, { recursive: true, force: true });
  });

  function run(ending: string, which = program): Promise<{ code: number | null; stderr: string }> {
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [which, folder, ending], { stdio: ["ignore", "ignore", "pipe"] });
      let stderr = "";
      child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
      const deadline = setTimeout(() => {
        child.kill("SIGKILL");
        reject(new Error(`the program did not exit within 10 s: ${stderr}`));
      }, 10_000);
      child.on("close", (code) => {
        clearTimeout(deadline);
        resolve({ code, stderr });
      });
    });
  }

  it.each(["exit", "started"])("writes every line, redacted, when the process exits (file logger %s)", async (ending) => {
    const { code, stderr } = await run(ending);
    expect(code, stderr).toBe(3);
    const lines = await logLines();
    expect(lines.map((line) => [line.level, line.message])).toEqual([
      ["info", "Core listening"],
      ["warn", "a tool call failed"],
    ]);
    expect(lines[1]).toMatchObject({ args: "[redacted]", apiKey: "[redacted]" });
    expect(JSON.stringify(lines)).not.toContain("SECRET");
  });

  it("writes every line without pino when pino cannot be loaded, and says so", async () => {
    const { code, stderr } = await run("started", programWithoutPino);
    expect(code, stderr).toBe(3);
    const lines = await logLines();
    expect(lines.map((line) => [line.level, line.message])).toEqual([
      ["info", "Core listening"],
      ["warn", "a tool call failed"],
      ["warn", "pino could not be loaded; log lines are written without it"],
    ]);
    expect(lines[1]).toMatchObject({ args: "[redacted]", apiKey: "[redacted]" });
    expect(lines[2]!.error).toContain("Dynamic require");
  });

  it.each([
    ["throw", "an uncaught exception ends the process", "boom in a timer"],
    ["reject", "an unhandled promise rejection ends the process", "a promise nobody awaited"],
  ])("writes a fatal line with the stack before the process dies (%s)", async (ending, message, errorText) => {
    const { code, stderr } = await run(ending);
    expect(code).toBe(1);
    // Node still reports it on stderr as usual.
    expect(stderr).toContain(errorText);
    const lines = await logLines();
    expect(lines.map((line) => [line.level, line.message])).toEqual([
      ["info", "Core listening"],
      ["warn", "a tool call failed"],
      ["fatal", message],
    ]);
    expect(lines[2]!.error).toMatch(new RegExp(`^Error: ${errorText}\\n\\s+at `));
  });
});
