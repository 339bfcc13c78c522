import { spawn } from "node:child_process";
import { mkdtemp, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

const STAND_IN = fileURLToPath(new URL("./opencode", import.meta.url));

let root: string;
beforeEach(async () => {
  root = await realpath(await mkdtemp(path.join(tmpdir(), "opencode-stand-in-")));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

function runStandIn(args: string[], stdin = "", extraEnv: Record<string, string> = {}) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn(STAND_IN, args, {
      cwd: root,
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: path.join(root, "home"), ...extraEnv },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => (stdout += chunk));
    child.stderr.on("data", (chunk) => (stderr += chunk));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(stdin);
  });
}

function lines(stdout: string): { type: string; sessionID: string; part?: { text?: string } }[] {
  return stdout
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as { type: string; sessionID: string });
}

describe("opencode stand-in", () => {
  it("prints its version", async () => {
    expect(await runStandIn(["--version"])).toMatchObject({ code: 0, stdout: "1.18.33\n" });
  });

  it("prints one JSON event per line, every one naming the session", async () => {
    const { code, stdout } = await runStandIn(["run", "--format", "json"], "reply: hi");
    expect(code).toBe(0);
    const events = lines(stdout);
    expect(events.map((event) => event.type)).toEqual(["step_start", "text", "step_finish", "done"]);
    expect(new Set(events.map((event) => event.sessionID)).size).toBe(1);
    expect(events[1]?.part?.text).toBe("hi");
  });

  it("puts positional message words in front of the piped prompt, as opencode run does (so `-` is text)", async () => {
    const { stdout } = await runStandIn(["run", "--format", "json", "-"], "report-args");
    expect(lines(stdout)[1]?.part?.text).toBe('["run","--format","json","-"]');
    const echoed = await runStandIn(["run", "--format", "json", "-"], "hello");
    expect(lines(echoed.stdout)[1]?.part?.text).toBe("echo: -\nhello");
  });

  it("rejects unknown options and bad choices like yargs in strict mode", async () => {
    expect(await runStandIn(["run", "--format", "json", "--pure"], "hi")).toMatchObject({ code: 1, stderr: "Unknown argument: pure\n" });
    expect((await runStandIn(["run", "--format", "xml"], "hi")).stderr).toContain('Choices: "default", "json"');
  });

  it("refuses a session it does not have, in colour, with exit 1", async () => {
    const { code, stderr } = await runStandIn(["run", "--format", "json", "--session", "ses_missing"], "hi");
    expect(code).toBe(1);
    expect(stderr).toBe("\x1b[91m\x1b[1mError: \x1b[0mSession not found\n");
  });

  it("asks are rejected without --auto, and allowed with it; denies hold either way", async () => {
    const permission = JSON.stringify({ bash: { "*": "ask", "rm *": "deny" } });
    const env = { OPENCODE_PERMISSION: permission };
    const asked = await runStandIn(["run", "--format", "json"], "bash: echo hi", env);
    expect(
      lines(asked.stdout)
        .filter((event) => event.type === "text")
        .at(-1)?.part?.text,
    ).toBe("Bash denied: The user rejected permission to use this specific tool call.");
    const approved = await runStandIn(["run", "--format", "json", "--auto"], "bash: echo hi", env);
    expect(
      lines(approved.stdout)
        .filter((event) => event.type === "text")
        .at(-1)?.part?.text,
    ).toBe("Bash exit 0: hi");
    const denied = await runStandIn(["run", "--format", "json", "--dangerously-skip-permissions"], "bash: rm -f nothing", env);
    expect(
      lines(denied.stdout)
        .filter((event) => event.type === "text")
        .at(-1)?.part?.text,
    ).toMatch(/^Bash denied: The user has specified a rule/);
  });
});
