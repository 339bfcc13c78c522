import { spawn } from "node:child_process";
import { mkdtemp, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

const STAND_IN = fileURLToPath(new URL("./cursor-agent", import.meta.url));

let root: string;
beforeEach(async () => {
  root = await realpath(await mkdtemp(path.join(tmpdir(), "cursor-stand-in-")));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

function runStandIn(args: string[], stdin = "") {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn(STAND_IN, args, {
      cwd: root,
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: path.join(root, "home") },
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

const STREAM_ARGS = ["-p", "--output-format", "stream-json", "--trust", "--force"];
const parse = (stdout: string) =>
  stdout
    .trimEnd()
    .split("\n")
    .map((line) => JSON.parse(line) as Record<string, any>);

describe("cursor-agent stand-in", () => {
  it("prints its version", async () => {
    expect(await runStandIn(["--version"])).toEqual({ code: 0, stdout: "2025.11.25-d5b3271\n", stderr: "" });
  });

  it("refuses unknown options, bad choices and an untrusted workspace", async () => {
    expect(await runStandIn([...STREAM_ARGS, "--dangerously-skip-permissions"], "hi")).toMatchObject({
      code: 1,
      stderr: "error: unknown option '--dangerously-skip-permissions'\n",
    });
    expect((await runStandIn([...STREAM_ARGS, "--sandbox", "maybe"], "hi")).stderr).toMatch(/Allowed choices are enabled, disabled/);
    expect((await runStandIn(["-p", "--output-format", "stream-json"], "hi")).stderr).toMatch(/^Workspace Trust Required/);
  });

  it("sends partial output with Cursor's repeats, and one line per message without it", async () => {
    const partial = parse((await runStandIn([...STREAM_ARGS, "--stream-partial-output"], "reply: Hello there")).stdout);
    const texts = partial.filter((line) => line.type === "assistant").map((line) => [line.message.content[0].text, "timestamp_ms" in line]);
    expect(texts).toEqual([
      ["Hell", true],
      ["o th", true],
      ["ere", true],
      ["Hello there", false],
    ]);
    expect(partial.at(-1)).toMatchObject({ type: "result", subtype: "success", result: "Hello there", session_id: partial[0]?.session_id });

    const whole = parse((await runStandIn(STREAM_ARGS, "reply: Hello there")).stdout);
    expect(whole.map((line) => line.type)).toEqual(["system", "user", "assistant", "result"]);
  });

  it("resumes a chat it keeps on disk, and refuses one it does not know", async () => {
    const first = parse((await runStandIn(STREAM_ARGS, "reply: one")).stdout);
    const chatId = first[0]?.session_id as string;
    const second = parse((await runStandIn([...STREAM_ARGS, "--resume", chatId], "report-resume")).stdout);
    expect(second.at(-1)).toMatchObject({ result: `resumed=${chatId}`, session_id: chatId });
    expect(await runStandIn([...STREAM_ARGS, "--resume", "nope"], "hi")).toMatchObject({ code: 1, stderr: "Error: Chat nope not found.\n" });
  });

  it("signs out like cursor-agent: stderr, exit 1, nothing on stdout", async () => {
    const { code, stdout, stderr } = await runStandIn(STREAM_ARGS, "not-logged-in");
    expect({ code, stdout }).toEqual({ code: 1, stdout: "" });
    expect(stderr).toMatch(/Not authenticated.*cursor-agent login/);
  });
});
