import { createServer } from "node:net";
import { mkdtemp, readFile, readdir, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { AGENT_API_KEY_ENV, DEFAULT_AGENT_MAX_TOOL_ROUNDS, type AgentEvent } from "@pedelec/protocol/agent-wire";
import { startOllamaServer, type RunningOllamaServer } from "../../../test/stand-ins/ollama/ollama-server.mjs";
import { buildAgentForTests, runAgent, startAgent } from "./testing/agent-process.js";

/** A key no message may ever show. */
const API_KEY = "sk-test-0d7c1f9e4b2a8c6e";

let entry: string;
let server: RunningOllamaServer;
let home: string;
let workspace: string;

beforeAll(async () => {
  entry = await buildAgentForTests();
});
beforeEach(async () => {
  server = await startOllamaServer({ apiKey: API_KEY });
  home = await mkdtemp(join(tmpdir(), "pedelec-agent-home-"));
  workspace = await mkdtemp(join(tmpdir(), "pedelec-agent-workspace-"));
});
afterEach(async () => {
  await server.close();
  await rm(home, { recursive: true, force: true });
  await rm(workspace, { recursive: true, force: true });
});
afterAll(async () => {
  await rm(join(entry, ".."), { recursive: true, force: true });
});

/** The environment Core gives the agent, without a session (no thread, no capability: page tools and scripts are off). */
function agentEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH, HOME: home, PEDELEC_HOME: home, [AGENT_API_KEY_ENV]: API_KEY, ...extra };
}

function agentArgs(extra: string[] = [], baseUrl = server.url): string[] {
  return ["run", "--workspace", workspace, "--model", "qwen3", "--base-url", baseUrl, ...extra];
}

function chatRequests() {
  return server.requests.filter((request) => request.path === "/api/chat");
}

type Run = Awaited<ReturnType<typeof runAgent>>;

/** Asserts a failed turn: exactly the code, exit 1, turn-failed last, nothing else on stdout, the key nowhere. */
function expectFailure(run: Run, code: string): Extract<AgentEvent, { type: "turn-failed" }> {
  expect(run.strayLines).toEqual([]);
  expect(run.code).toBe(1);
  const last = run.events.at(-1);
  expect(last).toMatchObject({ type: "turn-failed", error: { code } });
  expect(run.stdout()).not.toContain(API_KEY);
  expect(run.stderr()).not.toContain(API_KEY);
  return last as Extract<AgentEvent, { type: "turn-failed" }>;
}

async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const { port } = probe.address() as { port: number };
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

describe("pedelec-agent against an Ollama-compatible server", () => {
  it("streams text deltas while the server still holds the answer open, then completes the turn", async () => {
    const agent = startAgent(entry, { args: agentArgs(), stdin: "slow 150\nreply: Hello there, streaming world", env: agentEnv() });
    const first = await agent.nextEvent("text-delta");
    // The first piece is out while the rest of the answer has not even been written.
    expect(chatRequests()[0]?.state).toBe("open");
    expect(first.delta).toBe("Hell");
    const { code } = await agent.exited;
    expect(code).toBe(0);
    expect(chatRequests()[0]?.state).toBe("finished");
    expect(agent.strayLines).toEqual([]);
    const deltas = agent.events.filter((event) => event.type === "text-delta");
    expect(deltas.length).toBeGreaterThan(3);
    expect(deltas.every((event) => event.messageId === first.messageId)).toBe(true);
    expect(agent.events.map((event) => event.type)).toEqual([
      "conversation-started",
      ...deltas.map(() => "text-delta"),
      "message-completed",
      "turn-completed",
    ]);
    expect(agent.events.at(-2)).toEqual({ type: "message-completed", messageId: first.messageId, text: "Hello there, streaming world" });
    expect(agent.events.at(-1)).toMatchObject({ type: "turn-completed", rounds: 1, usage: { outputTokens: deltas.length } });
  });

  it("sends the model, the messages, the native tools, the options and the key as Ollama expects them", async () => {
    const run = await runAgent(entry, {
      args: agentArgs(["--num-ctx", "8192", "--temperature", "0.2", "--think", "on"]),
      stdin: "reply: ok",
      env: agentEnv(),
    });
    expect(run.code).toBe(0);
    const [request] = chatRequests();
    expect(request?.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(request?.body).toMatchObject({ model: "qwen3", stream: true, think: true, options: { num_ctx: 8192, temperature: 0.2 } });
    // An explicit effort's level reaches Ollama as its think level.
    expect((await runAgent(entry, { args: agentArgs(["--think", "medium"]), stdin: "reply: ok", env: agentEnv() })).code).toBe(0);
    expect(chatRequests().at(-1)?.body.think).toBe("medium");
    expect(request?.body.messages.map((message: { role: string }) => message.role)).toEqual(["system", "user"]);
    expect(request?.body.messages[1]).toEqual({ role: "user", content: "reply: ok" });
    const toolNames = request?.body.tools.map((tool: { function: { name: string } }) => tool.function.name);
    expect(toolNames).toEqual(["workspace_list_files", "workspace_read_file", "workspace_write_file", "run_script"]);
    expect(request?.body.tools[1]).toMatchObject({
      type: "function",
      function: { name: "workspace_read_file", parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] } },
    });
    // Thinking is not part of the answer the user sees.
    expect(run.events.find((event) => event.type === "message-completed")).toMatchObject({ text: "ok" });
  });

  it("runs the workspace file tools across rounds and hands their results back as tool messages", async () => {
    await writeFile(join(workspace, "notes.md"), "buy milk\n");
    const plan = [
      { say: "Let me look.", call: { name: "workspace_list_files", arguments: {} } },
      { call: { name: "workspace_read_file", arguments: { path: "notes.md" } }, callsInDoneChunk: true },
      {
        calls: [
          { name: "workspace_write_file", arguments: { path: "out/summary.txt", content: "milk" } },
          { name: "workspace_read_file", arguments: { path: "../etc/passwd" } },
        ],
      },
      { reply: "All done." },
    ];
    const run = await runAgent(entry, { args: agentArgs(), stdin: `plan: ${JSON.stringify(plan)}`, env: agentEnv() });
    expect(run.code).toBe(0);
    expect(await readFile(join(workspace, "out/summary.txt"), "utf8")).toBe("milk");
    const activities = run.events.flatMap((event) => (event.type === "activity" ? [event.activity] : []));
    expect(activities.map(({ id, kind, status, title }) => ({ id, kind, status, title }))).toEqual([
      { id: "tool-1-1", kind: "file-read", status: "started", title: "list ." },
      { id: "tool-1-1", kind: "file-read", status: "completed", title: "list ." },
      { id: "tool-2-1", kind: "file-read", status: "started", title: "read notes.md" },
      { id: "tool-2-1", kind: "file-read", status: "completed", title: "read notes.md" },
      { id: "tool-3-1", kind: "file-edit", status: "started", title: "write out/summary.txt" },
      { id: "tool-3-1", kind: "file-edit", status: "completed", title: "write out/summary.txt" },
      { id: "tool-3-2", kind: "file-read", status: "started", title: "read ../etc/passwd" },
      { id: "tool-3-2", kind: "file-read", status: "failed", title: "read ../etc/passwd" },
    ]);
    expect(run.events.at(-1)).toMatchObject({ type: "turn-completed", rounds: 4 });
    const last = chatRequests()[3]?.body.messages as { role: string; content: string; tool_name?: string; tool_calls?: unknown }[];
    expect(last.map((message) => message.role)).toEqual(["system", "user", "assistant", "tool", "assistant", "tool", "assistant", "tool", "tool"]);
    expect(last[2]).toMatchObject({ content: "Let me look.", tool_calls: [{ function: { name: "workspace_list_files", arguments: {} } }] });
    expect(JSON.parse(last[5]!.content)).toEqual({ ok: true, result: { path: "notes.md", content: "buy milk\n", sizeBytes: 9 } });
    expect(last[5]?.tool_name).toBe("workspace_read_file");
    expect(JSON.parse(last[8]!.content)).toMatchObject({ ok: false, error: { code: "WORKSPACE_PATH_INVALID" } });
  });

  it("gives the model a readable error for a tool it does not have, for bad arguments, and for scripts outside a session", async () => {
    const plan = [
      {
        calls: [
          { name: "no_such_tool", arguments: {} },
          { name: "workspace_read_file", arguments: { file: "x" } },
          { name: "run_script", arguments: { source: "1" } },
        ],
      },
      { reply: "ok" },
    ];
    const run = await runAgent(entry, { args: agentArgs(), stdin: `plan: ${JSON.stringify(plan)}`, env: agentEnv() });
    expect(run.code).toBe(0);
    const toolMessages = (chatRequests()[1]!.body.messages as { role: string; content: string }[]).filter((message) => message.role === "tool");
    expect(toolMessages.map((message) => JSON.parse(message.content).error.code)).toEqual(["TOOL_NOT_FOUND", "TOOL_ARGS_INVALID", "IPC_UNAVAILABLE"]);
  });

  it("continues a stored conversation in a fresh process, and reports a lost one", async () => {
    const first = await runAgent(entry, { args: agentArgs(), stdin: "reply: first answer", env: agentEnv() });
    expect(first.code).toBe(0);
    const started = first.events[0];
    expect(started).toMatchObject({ type: "conversation-started", resumed: false });
    const conversationId = (started as { conversationId: string }).conversationId;
    const folder = join(home, "agent", "conversations");
    expect((await stat(folder)).mode & 0o777).toBe(0o700);
    expect((await stat(join(folder, `${conversationId}.json`))).mode & 0o777).toBe(0o600);
    expect(await readdir(folder)).toEqual([`${conversationId}.json`]);

    const second = await runAgent(entry, { args: agentArgs(["--conversation", conversationId]), stdin: "reply: second answer", env: agentEnv() });
    expect(second.code).toBe(0);
    expect(second.events[0]).toEqual({ type: "conversation-started", conversationId, resumed: true });
    const messages = chatRequests()[1]?.body.messages as { role: string; content: string }[];
    expect(messages.map(({ role, content }) => (role === "system" ? role : `${role}: ${content}`))).toEqual([
      "system",
      "user: reply: first answer",
      "assistant: first answer",
      "user: reply: second answer",
    ]);

    const lost = await runAgent(entry, { args: agentArgs(["--conversation", "0000aaaa-gone"]), stdin: "reply: hi", env: agentEnv() });
    expect(expectFailure(lost, "THREAD_NOT_FOUND")).toMatchObject({ conversationLost: true });
    expect(lost.events).toHaveLength(1);

    const elsewhere = await mkdtemp(join(tmpdir(), "pedelec-agent-other-"));
    const moved = await runAgent(entry, {
      args: ["run", "--workspace", elsewhere, "--model", "qwen3", "--base-url", server.url, "--conversation", conversationId],
      stdin: "reply: hi",
      env: agentEnv(),
    });
    await rm(elsewhere, { recursive: true, force: true });
    expect(expectFailure(moved, "INVALID_INPUT").conversationLost).toBeUndefined();
    expect(chatRequests()).toHaveLength(2);
  });

  it("keeps the rounds done so far when the turn is killed", async () => {
    const plan = [{ call: { name: "workspace_write_file", arguments: { path: "a.txt", content: "a" } } }];
    const agent = startAgent(entry, { args: agentArgs(), stdin: `plan: ${JSON.stringify(plan)}\nslow 300`, env: agentEnv() });
    // The plan's second round answers "plan finished" slowly; kill the agent while it streams.
    await expect.poll(() => chatRequests().length, { timeout: 10_000 }).toBe(2);
    agent.child.kill("SIGKILL");
    await agent.exited;
    const { conversationId } = agent.events[0] as { conversationId: string };
    const stored = JSON.parse(await readFile(join(home, "agent", "conversations", `${conversationId}.json`), "utf8"));
    expect(stored.messages.map((message: { role: string }) => message.role)).toEqual(["system", "user", "assistant", "tool"]);
  });

  it("stops after the round limit with AGENT_TOOL_ROUNDS_EXCEEDED", async () => {
    const run = await runAgent(entry, {
      args: agentArgs(["--max-tool-rounds", "3"]),
      stdin: 'always-call workspace_list_files {"path":"."}',
      env: agentEnv(),
    });
    expectFailure(run, "AGENT_TOOL_ROUNDS_EXCEEDED");
    expect(chatRequests()).toHaveLength(3);
    expect(DEFAULT_AGENT_MAX_TOOL_ROUNDS).toBeGreaterThan(3);
  });

  it("aborts the HTTP request when Core kills the agent (SIGTERM, then SIGKILL)", async () => {
    for (const signal of ["SIGTERM", "SIGKILL"] as const) {
      const before = chatRequests().length;
      const agent = startAgent(entry, { args: agentArgs(), stdin: "hang", env: agentEnv() });
      await agent.nextEvent("text-delta");
      const request = chatRequests()[before];
      expect(request?.state).toBe("open");
      agent.child.kill(signal);
      const { signal: endedBy } = await agent.exited;
      expect(endedBy).toBe(signal);
      await expect.poll(() => request?.state, { timeout: 5_000 }).toBe("aborted");
    }
  });
});

describe("pedelec-agent's failures, each with its code", () => {
  const directiveCases: [directive: string, code: string, message: RegExp][] = [
    ["fail-401", "OLLAMA_AUTH_FAILED", /refused the API key \(401: unauthorized\)/],
    ["fail-403", "OLLAMA_AUTH_FAILED", /refused the API key \(403: forbidden\)/],
    ["fail-404-model", "OLLAMA_MODEL_NOT_FOUND", /ollama pull qwen3/],
    ["fail-404-path", "OLLAMA_REQUEST_FAILED", /answered 404: 404 page not found/],
    ["fail-500", "OLLAMA_REQUEST_FAILED", /answered 500: llama runner process has terminated/],
    ["garbage", "OLLAMA_RESPONSE_INVALID", /not JSON: this is not JSON/],
    ["wrong-shape", "OLLAMA_RESPONSE_INVALID", /not a chat chunk/],
    ["stream-error", "OLLAMA_REQUEST_FAILED", /failed while answering: an error was encountered/],
    ["no-done", "OLLAMA_RESPONSE_INVALID", /the stream ended early/],
    ["cut", "OLLAMA_RESPONSE_INVALID", /the stream ended early/],
  ];
  for (const [directive, code, message] of directiveCases) {
    it(`${directive} → ${code}`, async () => {
      const run = await runAgent(entry, { args: agentArgs(), stdin: directive, env: agentEnv() });
      const failed = expectFailure(run, code);
      expect(failed.error.message).toMatch(message);
      expect(run.events[0]).toMatchObject({ type: "conversation-started" });
    });
  }

  it("a model the server does not have → OLLAMA_MODEL_NOT_FOUND, naming ollama pull", async () => {
    const run = await runAgent(entry, {
      args: ["run", "--workspace", workspace, "--model", "llama9:70b", "--base-url", server.url],
      stdin: "reply: hi",
      env: agentEnv(),
    });
    expect(expectFailure(run, "OLLAMA_MODEL_NOT_FOUND").error.message).toContain("`ollama pull llama9:70b`");
  });

  it("a key the server refuses → OLLAMA_AUTH_FAILED, and the key is in no message", async () => {
    const wrongKey = "sk-wrong-9a8b7c6d5e4f";
    const run = await runAgent(entry, { args: agentArgs(), stdin: "reply: hi", env: agentEnv({ [AGENT_API_KEY_ENV]: wrongKey }) });
    expectFailure(run, "OLLAMA_AUTH_FAILED");
    expect(run.stdout() + run.stderr()).not.toContain(wrongKey);
    expect(chatRequests()[0]?.headers.authorization).toBe(`Bearer ${wrongKey}`);
  });

  it("no API key → OLLAMA_API_KEY_REQUIRED before any request", async () => {
    for (const key of [undefined, ""]) {
      const run = await runAgent(entry, { args: agentArgs(), stdin: "reply: hi", env: agentEnv({ [AGENT_API_KEY_ENV]: key }) });
      expectFailure(run, "OLLAMA_API_KEY_REQUIRED");
    }
    expect(server.requests).toHaveLength(0);
  });

  it("a base URL that is not http(s) or not a URL → OLLAMA_BASE_URL_INVALID before any request", async () => {
    for (const baseUrl of ["ftp://127.0.0.1:11434", "not a url", "http://user:secret@127.0.0.1:11434", ""]) {
      const run = await runAgent(entry, { args: agentArgs([], baseUrl), stdin: "reply: hi", env: agentEnv() });
      expectFailure(run, "OLLAMA_BASE_URL_INVALID");
      expect(run.stdout()).not.toContain("secret");
    }
    expect(server.requests).toHaveLength(0);
  });

  it("nothing listening → OLLAMA_UNAVAILABLE, naming the URL", async () => {
    const url = `http://127.0.0.1:${await closedPort()}`;
    const run = await runAgent(entry, { args: agentArgs([], url), stdin: "reply: hi", env: agentEnv() });
    expect(expectFailure(run, "OLLAMA_UNAVAILABLE").error.message).toContain(`${url}/api/chat`);
    expect(run.stdout()).toContain("ECONNREFUSED");
  });

  it("a server that goes silent → OLLAMA_UNAVAILABLE after the idle timeout, and the request is dropped", async () => {
    const started = Date.now();
    // Long enough that a loaded machine still delivers the first chunk within it, which this test needs to see.
    const run = await runAgent(entry, { args: agentArgs(), stdin: "hang", env: agentEnv({ PEDELEC_OLLAMA_IDLE_TIMEOUT_MS: "2000" }) });
    expect(expectFailure(run, "OLLAMA_UNAVAILABLE").error.message).toMatch(/sent nothing for/);
    expect(Date.now() - started).toBeGreaterThanOrEqual(2_000);
    expect(run.events.some((event) => event.type === "text-delta")).toBe(true);
    await expect.poll(() => chatRequests()[0]?.state, { timeout: 5_000 }).toBe("aborted");
  });

  it("an empty prompt, an unknown flag, a stray positional, no model or a relative workspace → refused before any request", async () => {
    const cases: [string[], string, string][] = [
      [agentArgs(), "  \n", "INVALID_INPUT"],
      [agentArgs(["--verbose"]), "reply: hi", "INVALID_INPUT"],
      [[...agentArgs(), "extra"], "reply: hi", "INVALID_INPUT"],
      [agentArgs(["--think", "maybe"]), "reply: hi", "INVALID_INPUT"],
      [agentArgs(["--max-tool-rounds", "0"]), "reply: hi", "INVALID_INPUT"],
      [agentArgs(["--conversation", "../../etc"]), "reply: hi", "INVALID_INPUT"],
      [["run", "--workspace", workspace, "--base-url", server.url], "reply: hi", "MODEL_REQUIRED"],
      [["run", "--workspace", "relative/dir", "--model", "qwen3", "--base-url", server.url], "reply: hi", "WORKSPACE_PATH_INVALID"],
    ];
    for (const [args, stdin, code] of cases) {
      const run = await runAgent(entry, { args, stdin, env: agentEnv() });
      expectFailure(run, code);
      expect(run.events).toHaveLength(1);
    }
    expect(server.requests).toHaveLength(0);
  });
});

describe("pedelec-agent's first-delta latency", () => {
  it("measures the time from process start to the first text-delta (median of 20)", async () => {
    const samples: number[] = [];
    for (let index = 0; index < 20; index += 1) {
      const started = performance.now();
      const agent = startAgent(entry, { args: agentArgs(), stdin: "reply: a quick answer", env: agentEnv() });
      await agent.nextEvent("text-delta");
      samples.push(performance.now() - started);
      await agent.exited;
    }
    samples.sort((left, right) => left - right);
    const median = (samples[9]! + samples[10]!) / 2;
    console.log(
      `pedelec-agent first text-delta after process start: median ${median.toFixed(1)} ms (min ${samples[0]!.toFixed(1)}, max ${samples[19]!.toFixed(1)})`,
    );
    expect(median).toBeLessThan(2_000);
  }, 60_000);
});
