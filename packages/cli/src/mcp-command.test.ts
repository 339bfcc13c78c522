import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CoreConnection } from "@pedelec/core-client/core-client";
import { startCore, type RunningCore } from "@pedelec/core/core-daemon";
import { capabilityOfHangingAgent } from "@pedelec/core/testing/agent-capability";
import { addTodoTool } from "@pedelec/core/testing/add-todo-tool";
import { runAgentCli } from "./agent-cli-command.js";

const repoRoot = resolve(fileURLToPath(new URL("../../../", import.meta.url)));
// The command agents start, as built (npm test builds first): the MCP server is a file of its own next to it.
const PEDELEC_CLI = join(repoRoot, "packages/cli/dist/agent-commands/pedelec-cli.cjs");
const standInDir = join(repoRoot, "test/stand-ins/claude");
const ORIGIN = "http://127.0.0.1:4000";

/** A tool the page never answers: only its timeout, the turn's end or the caller leaving settles a call. */
const WAIT_TOOL = { name: "wait_for_user", description: "Wait until the user answers", argsSchema: { type: "object" as const }, timeoutMs: 30_000 };

let home: string;
let core: RunningCore | undefined;
let page: CoreConnection | undefined;
/** The page's view of settled calls: tool request id → outcome. */
let settled: Map<string, string>;
let requested: string[];
const clients: Client[] = [];
beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), "pedelec-mcp-command-"));
  settled = new Map();
  requested = [];
});
afterEach(async () => {
  for (const client of clients.splice(0)) await client.close();
  page?.close();
  page = undefined;
  await core?.stop();
  core = undefined;
  await rm(home, { recursive: true, force: true });
});

/** A Core whose page answers `add_todo` with the card it made, and a session whose (stand-in) agent is mid-turn. */
async function sessionMidTurn(): Promise<{ sessionId: string; capability: string }> {
  core ??= await startCore({ ...process.env, PEDELEC_HOME: home, PEDELEC_PROVIDER_PATH: standInDir, CLAUDE_CONFIG_DIR: join(home, "claude-state") });
  if (page === undefined) {
    const connection = await CoreConnection.open(core.paths.socketPath);
    connection.onFrame((frame) => {
      if (frame.kind !== "event") return;
      const { event } = frame.envelope;
      if (event.type === "tool-call-settled") settled.set(event.toolRequestId, event.outcome);
      if (event.type !== "tool-call-requested") return;
      requested.push(event.toolRequestId);
      if (event.toolName === WAIT_TOOL.name) return;
      const { toolRequestId, args } = event;
      const outcome = { ok: true as const, result: { added: args } };
      void connection.request("submitToolResult", { sessionId: frame.envelope.sessionId, toolRequestId, outcome }, ORIGIN);
    });
    page = connection;
  }
  const session = await page.request(
    "createSession",
    { provider: "claude", skills: { guidance: "", tools: [addTodoTool(10_000), WAIT_TOOL] } },
    ORIGIN,
  );
  await page.request("sendText", { sessionId: session.sessionId, turnId: "turn-1", text: "hang" }, ORIGIN);
  return { sessionId: session.sessionId, capability: await capabilityOfHangingAgent(session.workspace.path) };
}

/** `pedelec-cli mcp` started the way an agent CLI starts it: the thread and capability in its environment only. */
async function connectMcp(threadId: string, capability: string): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [PEDELEC_CLI, "mcp"],
    env: { PATH: process.env.PATH ?? "", PEDELEC_HOME: home, PEDELEC_THREAD_ID: threadId, PEDELEC_THREAD_CAPABILITY: capability },
    stderr: "pipe",
  });
  const client = new Client({ name: "test-agent", version: "1" });
  await client.connect(transport);
  clients.push(client);
  return client;
}

const errorOf = (answer: Record<string, unknown>) => JSON.parse((answer.content as { text: string }[])[0]?.text ?? "{}").error;

describe("pedelec-cli mcp", () => {
  it("serves the session's tools over stdio: the page's tool runs with the arguments Core validated", { timeout: 60_000 }, async () => {
    const { sessionId, capability } = await sessionMidTurn();
    const client = await connectMcp(sessionId, capability);
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(["add_todo", "wait_for_user", "run_script"]);
    expect(tools[0]?.inputSchema).toMatchObject({ type: "object", required: ["title"] });

    const added = await client.callTool({ name: "add_todo", arguments: { title: "milk" } });
    expect(added).toMatchObject({ structuredContent: { added: { title: "milk" } } });
    expect(added.isError).toBeUndefined();

    const invalid = await client.callTool({ name: "add_todo", arguments: { title: "" } });
    expect(invalid.isError).toBe(true);
    expect(errorOf(invalid)).toMatchObject({ code: "TOOL_ARGS_INVALID", remedy: expect.any(String) });

    const unknown = await client.callTool({ name: "no_such_tool", arguments: {} });
    expect(unknown.isError).toBe(true);
    expect(errorOf(unknown).code).toMatch(/^[A-Z_]+$/);
  });

  it("abandons the call at Core when the agent cancels it, so the page's handler is told at once", { timeout: 60_000 }, async () => {
    const { sessionId, capability } = await sessionMidTurn();
    const client = await connectMcp(sessionId, capability);
    const controller = new AbortController();
    const call = client.callTool({ name: WAIT_TOOL.name, arguments: {} }, undefined, { signal: controller.signal });
    await expect.poll(() => requested.length, { timeout: 10_000 }).toBe(1);
    controller.abort(new Error("the user pressed Escape"));
    await expect(call).rejects.toThrow("the user pressed Escape");
    // Long before the tool's 30 s timeout.
    await expect.poll(() => settled.get(requested[0]!), { timeout: 10_000 }).toBe("abandoned");
  });

  it("lists and calls nothing of a session with another session's capability", { timeout: 60_000 }, async () => {
    const mine = await sessionMidTurn();
    const other = await sessionMidTurn();
    const client = await connectMcp(mine.sessionId, other.capability);
    await expect(client.listTools()).rejects.toThrow(/THREAD_ACCESS_DENIED/);
    const call = await client.callTool({ name: "add_todo", arguments: { title: "stolen" } });
    expect(call.isError).toBe(true);
    expect(errorOf(call).code).toBe("THREAD_ACCESS_DENIED");
  });

  it("refuses to serve outside an agent turn, where no capability is in the environment", async () => {
    let out = "";
    const code = await runAgentCli(["--thread-id", "3f2a9c1e-0000-4000-8000-000000000001", "mcp"], {
      out: (text) => (out += text),
      err: () => undefined,
      env: {},
      readStdin: async () => "",
    });
    expect(code).toBe(1);
    expect(JSON.parse(out).error).toMatchObject({ code: "THREAD_ACCESS_DENIED" });
  });

  it("takes no tool name or arguments", async () => {
    let out = "";
    const io = { out: (text: string) => (out += text), err: () => undefined, env: {}, readStdin: async () => "" };
    expect(await runAgentCli(["--thread-id", "3f2a9c1e-0000-4000-8000-000000000001", "mcp", "add_todo"], io)).toBe(2);
    expect(JSON.parse(out).error).toMatchObject({ code: "INVALID_INPUT" });
  });
});
