import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CoreConnection } from "@pedelec/core-client/core-client";
import { startCore, type RunningCore } from "@pedelec/core/core-daemon";
import { capabilityOfHangingAgent } from "@pedelec/core/testing/agent-capability";
import { addTodoTool } from "@pedelec/core/testing/add-todo-tool";
import { encodeFrame, FrameDecoder } from "@pedelec/protocol/frame-codec";
import { CORE_VERSION } from "@pedelec/core-client/core-version";
import { runAgentCli } from "./agent-cli-command.js";

let home: string;
let core: RunningCore | undefined;
let fakeCore: Server | undefined;
beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), "pedelec-agent-cli-"));
});
afterEach(async () => {
  await core?.stop();
  core = undefined;
  await new Promise((resolvePromise) => (fakeCore ? fakeCore.close(resolvePromise) : resolvePromise(undefined)));
  fakeCore = undefined;
  await rm(home, { recursive: true, force: true });
});

const standInDir = resolve(fileURLToPath(new URL("../../../test/stand-ins/claude", import.meta.url)));
const ORIGIN = "http://127.0.0.1:4000";

/**
 * A stand-in for Core on this home's socket: it reads the one request frame and answers with what `answer` makes of
 * its id, so a test can send replies the real Core never would.
 */
async function serveFakeCore(answer: (id: string) => unknown): Promise<void> {
  await mkdir(join(home, "run"), { recursive: true });
  const server = createServer((socket) => {
    const decoder = new FrameDecoder(1024 * 1024);
    socket.on("data", (chunk: Buffer) => {
      for (const decoded of decoder.push(chunk)) {
        if (decoded.ok) socket.write(encodeFrame(answer((decoded.message as { id: string }).id), 64 * 1024 * 1024));
      }
    });
    socket.on("error", () => undefined);
  });
  fakeCore = server;
  await new Promise<void>((resolvePromise) => server.listen(join(home, "run", "core.sock"), resolvePromise));
}

const THREAD = "8d0c1d56-1b4f-4a53-9d56-2ac8c3b4f0aa";
const CAPABILITY = "c".repeat(43);

async function agentCli(argv: string[], env: NodeJS.ProcessEnv = { PEDELEC_THREAD_CAPABILITY: CAPABILITY }, stdin: string | Error = "") {
  let out = "";
  const code = await runAgentCli(argv, {
    out: (text) => (out += text),
    err: () => undefined,
    env: { PEDELEC_HOME: home, ...env },
    readStdin: async () => {
      if (stdin instanceof Error) throw stdin;
      return stdin;
    },
  });
  return { code, out, json: JSON.parse(out) as { error?: { code: string; message: string } } };
}

describe("pedelec-cli", () => {
  it.each([
    [["tool-call", "x", "{}"]],
    [["--thread-id", THREAD, "tool-dance", "x"]],
    [["--thread-id", THREAD, "tool-call"]],
    [["--thread-id", THREAD, "tool-spec", "x", "extra"]],
    [["--thread-id", "../../etc", "tool-spec", "x"]],
    [["--unknown", "tool-spec", "x"]],
  ])("answers bad usage %j with INVALID_INPUT as JSON and exit 2", async (argv) => {
    const result = await agentCli(argv);
    expect(result.code).toBe(2);
    expect(result.json.error?.code).toBe("INVALID_INPUT");
  });

  it("prints its usage for --help and exits 0, without Core or a thread", async () => {
    let out = "";
    const code = await runAgentCli(["--help"], { out: (text) => (out += text), err: () => undefined, env: {}, readStdin: async () => "" });
    expect(code).toBe(0);
    expect(out).toContain("pedelec-cli --thread-id <id> tool-call <tool-name>");
  });

  it("prints its version for --version and exits 0, without Core or a thread", async () => {
    let out = "";
    const code = await runAgentCli(["--version"], { out: (text) => (out += text), err: () => undefined, env: {}, readStdin: async () => "" });
    expect(code).toBe(0);
    expect(out).toBe(`pedelec-cli ${CORE_VERSION}\n`);
  });

  it("says IPC_UNAVAILABLE as JSON when Core is not running", async () => {
    const result = await agentCli(["--thread-id", THREAD, "tool-spec", "add_todo"]);
    expect(result.code).toBe(1);
    expect(result.json.error?.code).toBe("IPC_UNAVAILABLE");
  });

  it("takes the thread id from PEDELEC_THREAD_ID; an unknown thread is refused like a wrong capability", async () => {
    core = await startCore({ ...process.env, PEDELEC_HOME: home });
    const result = await agentCli(["tool-call", "add_todo", '{"title":"x"}'], { PEDELEC_THREAD_ID: THREAD, PEDELEC_THREAD_CAPABILITY: CAPABILITY });
    expect(result.code).toBe(1);
    expect(result.json.error).toMatchObject({ code: "THREAD_ACCESS_DENIED" });
  });

  it("refuses to run outside an agent turn, where no thread capability is in the environment", async () => {
    const result = await agentCli(["--thread-id", THREAD, "tool-spec", "add_todo"], {});
    expect(result.code).toBe(1);
    expect(result.json.error).toMatchObject({ code: "THREAD_ACCESS_DENIED", message: expect.stringContaining("PEDELEC_THREAD_CAPABILITY") });
  });

  it("answers arguments on stdin that cannot be read (invalid UTF-8, too large) with INVALID_INPUT, before reaching Core", async () => {
    const result = await agentCli(
      ["--thread-id", THREAD, "tool-call", "add_todo", "-"],
      undefined,
      new TypeError("The encoded data was not valid for encoding utf-8"),
    );
    expect(result.code).toBe(1);
    expect(result.json.error).toMatchObject({ code: "INVALID_INPUT", message: expect.stringContaining("not valid for encoding utf-8") });
  });

  it("calls a page tool and reads its spec through a real Core, inside an agent turn", async () => {
    core = await startCore({ ...process.env, PEDELEC_HOME: home, PEDELEC_PROVIDER_PATH: standInDir, CLAUDE_CONFIG_DIR: join(home, "claude-state") });
    const page = await CoreConnection.open(core.paths.socketPath);
    try {
      // The page answers the tool call the way an SDK page would.
      page.onFrame((frame) => {
        if (frame.kind !== "event" || frame.envelope.event.type !== "tool-call-requested") return;
        const { toolRequestId, args } = frame.envelope.event;
        const outcome = { ok: true as const, result: { added: args } };
        void page.request("submitToolResult", { sessionId: frame.envelope.sessionId, toolRequestId, outcome }, ORIGIN);
      });
      const session = await page.request("createSession", { provider: "claude", skills: { guidance: "", tools: [addTodoTool(10_000)] } }, ORIGIN);
      await page.request("sendText", { sessionId: session.sessionId, turnId: "turn-1", text: "hang" }, ORIGIN);
      const env = { PEDELEC_THREAD_CAPABILITY: await capabilityOfHangingAgent(session.workspace.path) };
      const call = await agentCli(["--thread-id", session.sessionId, "tool-call", "add_todo", '{"title":"milk"}'], env);
      expect(call).toMatchObject({ code: 0, json: { added: { title: "milk" } } });
      const spec = await agentCli(["--thread-id", session.sessionId, "tool-spec", "add_todo"], env);
      expect(spec).toMatchObject({ code: 0, json: { name: "add_todo", argsSchema: { required: ["title"] } } });
      const invalid = await agentCli(["--thread-id", session.sessionId, "tool-call", "add_todo", '{"title":""}'], env);
      expect(invalid).toMatchObject({ code: 1, json: { error: { code: "TOOL_ARGS_INVALID" } } });
    } finally {
      page.close();
    }
  });

  it.each([
    ["a response whose ok is not a boolean", (id: string) => ({ kind: "response", id, ok: "yes", result: {} })],
    ["a tool result nested past the limit", (id: string) => ({ kind: "response", id, ok: true, result: { result: nested(70) } })],
    ["a result that is not an object", (id: string) => ({ kind: "response", id, ok: true, result: [1] })],
    ["an event it never subscribed to", () => ({ kind: "event", envelope: {} })],
  ])("refuses %s from Core with SDK_PROTOCOL_ERROR", async (_, answer) => {
    await serveFakeCore(answer);
    const result = await agentCli(["--thread-id", THREAD, "tool-call", "add_todo", "{}"]);
    expect(result).toMatchObject({ code: 1, json: { error: { code: "SDK_PROTOCOL_ERROR" } } });
  });

  it("refuses a tool spec that does not match the protocol's schema with SDK_PROTOCOL_ERROR", async () => {
    await serveFakeCore((id) => ({ kind: "response", id, ok: true, result: { name: "add_todo", description: "", argsSchema: { type: "string" } } }));
    const result = await agentCli(["--thread-id", THREAD, "tool-spec", "add_todo"]);
    expect(result).toMatchObject({ code: 1, json: { error: { code: "SDK_PROTOCOL_ERROR" } } });
  });

  it("reports Core's fatal frame with its code", async () => {
    await serveFakeCore(() => ({ kind: "fatal", error: { code: "MESSAGE_TOO_LARGE", message: "frame too large" } }));
    const result = await agentCli(["--thread-id", THREAD, "tool-call", "add_todo", "{}"]);
    expect(result).toMatchObject({ code: 1, json: { error: { code: "MESSAGE_TOO_LARGE" } } });
  });
});

function nested(depth: number): unknown {
  let value: unknown = "leaf";
  for (let level = 0; level < depth; level += 1) value = [value];
  return value;
}
