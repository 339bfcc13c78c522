import { spawn } from "node:child_process";
import { mkdtemp, readFile, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

const STAND_IN = fileURLToPath(new URL("./claude", import.meta.url));

let root: string;
let cwd: string;
beforeEach(async () => {
  root = await realpath(await mkdtemp(path.join(tmpdir(), "claude-stand-in-")));
  cwd = root;
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

function runStandIn(args: string[], stdin = "", extraEnv: Record<string, string> = {}) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn(STAND_IN, args, {
      cwd,
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

const STREAM_ARGS = ["-p", "--output-format", "stream-json", "--verbose", "--include-partial-messages"];

describe("claude stand-in", () => {
  it("prints its version", async () => {
    const { code, stdout } = await runStandIn(["--version"]);
    expect(code).toBe(0);
    expect(stdout).toBe("2.1.332 (Claude Code)\n");
  });

  it("streams a reply in Claude Code's stream-json and stores the conversation under $HOME/.claude", async () => {
    const { code, stdout, stderr } = await runStandIn(STREAM_ARGS, "[User Message]\nreply: Hello there, world");
    expect(stderr).toBe("");
    expect(code).toBe(0);
    const lines = stdout
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line) as Record<string, any>);
    const [init] = lines;
    expect(init).toMatchObject({ type: "system", subtype: "init", cwd, model: "claude-sonnet-4-5", claude_code_version: "2.1.332" });
    const sessionId: string = init?.session_id;
    expect(sessionId).toMatch(/^[0-9a-f-]{36}$/);

    const events = lines.filter((line) => line.type === "stream_event").map((line) => line.event.type);
    expect(events[0]).toBe("message_start");
    expect(events.slice(-3)).toEqual(["content_block_stop", "message_delta", "message_stop"]);
    const deltas = lines.filter((line) => line.event?.type === "content_block_delta").map((line) => line.event.delta.text);
    expect(deltas.length).toBeGreaterThan(2);
    expect(deltas.join("")).toBe("Hello there, world");

    const assistant = lines.find((line) => line.type === "assistant");
    const messageStart = lines.find((line) => line.event?.type === "message_start");
    expect(assistant?.message).toMatchObject({ role: "assistant", content: [{ type: "text", text: "Hello there, world" }] });
    expect(assistant?.message.id).toBe(messageStart?.event.message.id);
    expect(assistant?.message.id).toMatch(/^msg_/);
    expect(lines.at(-1)).toMatchObject({ type: "result", subtype: "success", is_error: false, result: "Hello there, world", session_id: sessionId });

    const file = path.join(root, "home", ".claude", "projects", cwd.replaceAll("/", "-"), `${sessionId}.jsonl`);
    expect(await readFile(file, "utf8")).toContain("reply: Hello there, world");
  });

  it("answers reply-deltas in as many numbered deltas as STAND_IN_DELTA_COUNT asks, in order", async () => {
    const { code, stdout, stderr } = await runStandIn(STREAM_ARGS, "[User Message]\nreply-deltas", { STAND_IN_DELTA_COUNT: "300" });
    expect(stderr).toBe("");
    expect(code).toBe(0);
    const lines = stdout
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line) as Record<string, any>);
    const deltas = lines.filter((line) => line.event?.delta?.type === "text_delta").map((line) => line.event.delta.text as string);
    const expected = Array.from({ length: 300 }, (_, index) => `${index} `);
    expect(deltas).toEqual(expected);
    expect(lines.find((line) => line.type === "assistant")?.message.content).toEqual([{ type: "text", text: expected.join("") }]);
    expect(lines.at(-1)).toMatchObject({ type: "result", subtype: "success", result: expected.join("") });

    const unset = await runStandIn(STREAM_ARGS, "reply-deltas");
    expect(unset.stdout.split("\n").filter((line) => line.includes('"text_delta"'))).toHaveLength(10_000);
  });

  it("refuses a reply-deltas count that is not a positive integer", async () => {
    const { code, stderr } = await runStandIn(STREAM_ARGS, "reply-deltas", { STAND_IN_DELTA_COUNT: "many" });
    expect(code).toBe(1);
    expect(stderr).toBe("STAND_IN_DELTA_COUNT must be a positive integer, not many\n");
  });

  it("sends no stream events without --include-partial-messages", async () => {
    const { stdout } = await runStandIn(["-p", "--output-format", "stream-json", "--verbose"], "hi");
    const types = stdout
      .trimEnd()
      .split("\n")
      .map((line) => (JSON.parse(line) as { type: string }).type);
    expect(types).toEqual(["system", "assistant", "result"]);
  });

  it("refuses stream-json without --verbose, like the real CLI", async () => {
    const { code, stdout, stderr } = await runStandIn(["-p", "--output-format", "stream-json"], "hi");
    expect(code).toBe(1);
    expect(stdout).toBe("");
    expect(stderr).toBe("Error: When using --print, --output-format=stream-json requires --verbose\n");
  });

  it("refuses to resume an unknown conversation, and resumes a known one only from the same cwd", async () => {
    const unknown = await runStandIn([...STREAM_ARGS, "--resume", "00000000-0000-4000-8000-000000000000"], "hi", {
      CLAUDE_CONFIG_DIR: path.join(root, "state"),
    });
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toBe("No conversation found with session ID: 00000000-0000-4000-8000-000000000000\n");

    const first = await runStandIn(STREAM_ARGS, "hi", { CLAUDE_CONFIG_DIR: path.join(root, "state") });
    const sessionId = (JSON.parse(first.stdout.split("\n")[0] ?? "{}") as { session_id: string }).session_id;
    const resumed = await runStandIn([...STREAM_ARGS, "--resume", sessionId], "report-resume", { CLAUDE_CONFIG_DIR: path.join(root, "state") });
    expect(resumed.code).toBe(0);
    expect(resumed.stdout).toContain(`"result":"resumed=${sessionId}"`);

    cwd = path.join(root, "state");
    const elsewhere = await runStandIn([...STREAM_ARGS, "--resume", sessionId], "hi", { CLAUDE_CONFIG_DIR: path.join(root, "state") });
    expect(elsewhere.code).toBe(1);
    expect(elsewhere.stderr).toBe(`No conversation found with session ID: ${sessionId}\n`);
  });

  it("rejects options it does not know, so argv mistakes show up in tests", async () => {
    const { code, stderr } = await runStandIn([...STREAM_ARGS, "--frobnicate"], "hi");
    expect(code).toBe(1);
    expect(stderr).toBe("error: unknown option '--frobnicate'\n");
  });
});
