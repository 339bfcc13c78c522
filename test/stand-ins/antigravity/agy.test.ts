import { spawn } from "node:child_process";
import { mkdtemp, readdir, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

const STAND_IN = fileURLToPath(new URL("./agy", import.meta.url));
const STREAM = ["--output-format", "stream-json"];

let root: string;
beforeEach(async () => {
  root = await realpath(await mkdtemp(path.join(tmpdir(), "agy-stand-in-")));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

function runStandIn(args: string[], stdin = "") {
  return new Promise<{ code: number | null; stdout: string; stderr: string; lines: Record<string, any>[] }>((resolve, reject) => {
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
    child.on("close", (code) => {
      const lines = stdout
        .split("\n")
        .filter((line) => line.startsWith("{"))
        .map((line) => JSON.parse(line) as Record<string, any>);
      resolve({ code, stdout, stderr, lines });
    });
    child.stdin.end(stdin);
  });
}

describe("agy stand-in", () => {
  it("prints its version", async () => {
    expect(await runStandIn(["--version"])).toMatchObject({ code: 0, stdout: "1.1.17\n" });
  });

  it("streams init, the user_input echo, agent_response deltas and the result, keyed by event", async () => {
    const { code, lines } = await runStandIn(["-p", "reply: Hello there, world", ...STREAM, "--dangerously-skip-permissions"]);
    expect(code).toBe(0);
    const kinds = lines.map((line) => line.event);
    expect(kinds[0]).toBe("init");
    expect(kinds.at(-1)).toBe("result");
    expect(new Set(kinds.slice(1, -1))).toEqual(new Set(["step_update"]));
    const conversationId = lines[0]?.conversation_id as string;
    expect(conversationId).toMatch(/^[0-9a-f-]{36}$/);
    expect(lines[1]?.step_update).toMatchObject({ step_type: "user_input", text_delta: "reply: Hello there, world" });
    const deltas = lines.filter((line) => line.step_update?.step_type === "agent_response").map((line) => line.step_update.text_delta);
    expect(deltas.join("")).toBe("Hello there, world");
    expect(lines.at(-1)).toMatchObject({
      event: "result",
      result: { status: "SUCCESS", response: "Hello there, world", conversation_id: conversationId },
    });
    expect(await readdir(path.join(root, "home", ".gemini", "antigravity-cli", "conversations"))).toEqual([`${conversationId}.jsonl`]);
  });

  it("takes the prompt only from the argv element after -p, never from stdin", async () => {
    const { code, stderr } = await runStandIn(STREAM, "reply: from stdin");
    expect(code).toBe(1);
    expect(stderr).toMatch(/print mode/);
    const dashed = await runStandIn(["-p", "--not-a-flag", ...STREAM]);
    expect(dashed.lines.at(-1)).toMatchObject({ result: { status: "SUCCESS", response: "echo: --not-a-flag" } });
  });

  it("fails like a Go flag parser on unknown flags and missing values", async () => {
    expect(await runStandIn(["-p", "hi", "--effort", "high"])).toMatchObject({ code: 1, stderr: "Error: unknown flag: --effort\n" });
    expect(await runStandIn(["-p"])).toMatchObject({ code: 1, stderr: "Error: flag needs an argument: 'p' in -p\n" });
    expect(await runStandIn(["-p", "hi", "--mode", "yolo"])).toMatchObject({ code: 1 });
  });

  it("denies every command without --dangerously-skip-permissions, pedelec-cli included", async () => {
    const { code, lines } = await runStandIn(["-p", "bash: pedelec-cli tool-spec x", ...STREAM, "--mode", "accept-edits"]);
    expect(code).toBe(0);
    const tool = lines.filter((line) => line.step_update?.step_type === "tool").map((line) => line.step_update);
    expect(tool.map((step) => step.state)).toEqual(["ACTIVE", "ERROR"]);
    expect(tool[1]?.error.message).toBe('permission check failed for command "pedelec-cli tool-spec x": user denied permission');
    expect(lines.at(-1)).toMatchObject({ result: { status: "ERROR" } });
  });

  it("fails to resume an unknown conversation, and signs nobody in headless", async () => {
    expect(await runStandIn(["--conversation", "nope", "-p", "hi", ...STREAM])).toMatchObject({
      code: 1,
      stdout: "",
      stderr: 'Error: conversation "nope" not found\n',
    });
    expect(await runStandIn(["-p", "not-logged-in", ...STREAM])).toMatchObject({ code: 1, stdout: "", stderr: "authentication required\n" });
  });
});
