import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { AGENT_API_KEY_ENV, type AgentEvent } from "@pedelec/protocol/agent-wire";
import { THREAD_CAPABILITY_ENV } from "@pedelec/protocol/requests";
import { CoreConnection } from "@pedelec/core-client/core-client";
import { startCore, type RunningCore } from "@pedelec/core/core-daemon";
import { capabilityOfHangingAgent } from "@pedelec/core/testing/agent-capability";
import { startOllamaServer, type RunningOllamaServer } from "../../../test/stand-ins/ollama/ollama-server.mjs";
import { buildAgentForTests, runAgent } from "./testing/agent-process.js";

const claudeStandIn = resolve(fileURLToPath(new URL("../../../test/stand-ins/claude", import.meta.url)));
const ORIGIN = "http://127.0.0.1:4000";
const API_KEY = "sk-core-test-5f1e2d3c";
const pageTools = [
  {
    name: "add_todo",
    description: "Add a card to the board",
    argsSchema: { type: "object" as const, properties: { title: { type: "string" as const, minLength: 1 } }, required: ["title"] },
    timeoutMs: 30_000,
  },
  // Named like a built-in tool: the agent keeps its own and leaves this one out.
  { name: "run_script", description: "The page's own runner", argsSchema: { type: "object" as const, properties: {} }, timeoutMs: 30_000 },
];

let entry: string;
let home: string;
let core: RunningCore | undefined;
let server: RunningOllamaServer;
const connections: CoreConnection[] = [];

beforeAll(async () => {
  entry = await buildAgentForTests();
});
afterAll(async () => {
  await rm(join(entry, ".."), { recursive: true, force: true });
});
beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), "pedelec-agent-core-"));
  core = await startCore({ ...process.env, PEDELEC_HOME: home, PEDELEC_PROVIDER_PATH: claudeStandIn, CLAUDE_CONFIG_DIR: join(home, "claude-state") });
  server = await startOllamaServer({ apiKey: API_KEY });
});
afterEach(async () => {
  for (const connection of connections.splice(0)) connection.close();
  await core?.stop();
  core = undefined;
  await server.close();
  await rm(home, { recursive: true, force: true });
});

/**
 * A session with the page tools above, and the thread capability Core gives that session's agent processes. Core's
 * Ollama provider is not used here: a turn of the stand-in Claude CLI hangs, and the capability is read from its
 * environment, exactly what Core would put in pedelec-agent's.
 */
async function sessionWithCapability() {
  const page = await CoreConnection.open(core!.paths.socketPath);
  connections.push(page);
  const { sessionId, workspace } = await page.request("createSession", { provider: "claude", skills: { guidance: "", tools: pageTools } }, ORIGIN);
  await page.request("sendText", { sessionId, turnId: "turn-1", text: "hang" }, ORIGIN);
  const capability = await capabilityOfHangingAgent(workspace.path);
  // The page's handler for add_todo: answers every call with the card it made.
  const calls: unknown[] = [];
  page.onFrame((frame) => {
    if (frame.kind !== "event" || frame.envelope.event.type !== "tool-call-requested") return;
    const { toolRequestId, args } = frame.envelope.event;
    calls.push(args);
    void page.request(
      "submitToolResult",
      { sessionId, toolRequestId, outcome: { ok: true, result: { id: `card-${calls.length}`, ...(args as object) } } },
      ORIGIN,
    );
  });
  return { sessionId, workspace: workspace.path, capability, calls };
}

/**
 * Events with their message ids numbered in order of appearance, activity details left out, and the text deltas of one
 * message joined into one (how many the agent sends depends on timing: it joins pieces that come close together), for
 * exact comparison.
 */
function normalized(events: AgentEvent[]) {
  const messageIds: string[] = [];
  const numbered = (id: string) => {
    if (!messageIds.includes(id)) messageIds.push(id);
    return `message-${messageIds.indexOf(id) + 1}`;
  };
  const joined: AgentEvent[] = [];
  for (const event of events) {
    const previous = joined.at(-1);
    if (event.type === "text-delta" && previous?.type === "text-delta" && previous.messageId === event.messageId) {
      joined[joined.length - 1] = { ...previous, delta: previous.delta + event.delta };
    } else {
      joined.push(event);
    }
  }
  return joined.map((event) => {
    switch (event.type) {
      case "conversation-started":
        return { type: event.type, resumed: event.resumed };
      case "text-delta":
        return { type: event.type, messageId: numbered(event.messageId), delta: event.delta };
      case "message-completed":
        return { ...event, messageId: numbered(event.messageId) };
      case "activity": {
        const { detail: _detail, ...activity } = event.activity;
        return { type: event.type, activity };
      }
      default:
        return event;
    }
  });
}

describe("pedelec-agent in a real Core session", () => {
  it("runs a multi-round turn: text, a page tool, a workspace read, a script, the final answer", async () => {
    const { sessionId, workspace, capability, calls } = await sessionWithCapability();
    await writeFile(join(workspace, "notes.md"), "buy milk\n");
    await writeFile(join(workspace, "count.ts"), 'console.log(Deno.args.length, Deno.args.join(","));\n');
    const plan = [
      { say: "Adding the card.", call: { name: "add_todo", arguments: { title: "Buy milk" } } },
      {
        calls: [
          { name: "add_todo", arguments: { title: "" } },
          { name: "workspace_read_file", arguments: { path: "notes.md" } },
        ],
      },
      { call: { name: "run_script", arguments: { path: "count.ts", args: ["a", "b"] } } },
      { reply: "Done: the card is on the board." },
    ];
    const run = await runAgent(entry, {
      args: ["run", "--workspace", workspace, "--model", "qwen3", "--base-url", server.url],
      stdin: `plan: ${JSON.stringify(plan)}`,
      cwd: workspace,
      env: {
        PATH: process.env.PATH,
        PEDELEC_HOME: home,
        PEDELEC_THREAD_ID: sessionId,
        [THREAD_CAPABILITY_ENV]: capability,
        [AGENT_API_KEY_ENV]: API_KEY,
      },
    });
    expect(run.strayLines).toEqual([]);
    expect(run.code, run.stderr()).toBe(0);
    expect(run.stderr()).toContain("the page tool run_script has the name of a built-in tool");

    expect(normalized(run.events)).toEqual([
      { type: "conversation-started", resumed: false },
      { type: "text-delta", messageId: "message-1", delta: "Adding the card." },
      { type: "message-completed", messageId: "message-1", text: "Adding the card." },
      { type: "activity", activity: { id: "tool-1-1", kind: "tool", status: "started", title: "add_todo" } },
      { type: "activity", activity: { id: "tool-1-1", kind: "tool", status: "completed", title: "add_todo" } },
      { type: "activity", activity: { id: "tool-2-1", kind: "tool", status: "started", title: "add_todo" } },
      { type: "activity", activity: { id: "tool-2-1", kind: "tool", status: "failed", title: "add_todo" } },
      { type: "activity", activity: { id: "tool-2-2", kind: "file-read", status: "started", title: "read notes.md" } },
      { type: "activity", activity: { id: "tool-2-2", kind: "file-read", status: "completed", title: "read notes.md" } },
      { type: "activity", activity: { id: "tool-3-1", kind: "command", status: "started", title: "run count.ts" } },
      { type: "activity", activity: { id: "tool-3-1", kind: "command", status: "completed", title: "run count.ts" } },
      { type: "text-delta", messageId: "message-2", delta: "Done: the card is on the board." },
      { type: "message-completed", messageId: "message-2", text: "Done: the card is on the board." },
      { type: "turn-completed", rounds: 4, usage: { promptTokens: expect.any(Number) as number, outputTokens: 4 + 1 + 2 + 1 + 8 } },
    ]);
    expect(calls).toEqual([{ title: "Buy milk" }]);

    // What the model was offered and what it read back.
    const chats = server.requests.filter((request) => request.path === "/api/chat");
    expect(chats).toHaveLength(4);
    const offered = chats[0]?.body.tools.map((tool: { function: { name: string } }) => tool.function.name);
    expect(offered).toEqual(["workspace_list_files", "workspace_read_file", "workspace_write_file", "run_script", "add_todo"]);
    expect(chats[0]?.body.tools[4].function).toEqual({
      name: "add_todo",
      description: "Add a card to the board",
      parameters: pageTools[0]!.argsSchema,
    });
    const toolResults = (chats[3]!.body.messages as { role: string; tool_name?: string; content: string }[])
      .filter((message) => message.role === "tool")
      .map((message) => ({ tool: message.tool_name, ...JSON.parse(message.content) }));
    expect(toolResults).toEqual([
      { tool: "add_todo", ok: true, result: { id: "card-1", title: "Buy milk" } },
      { tool: "add_todo", ok: false, error: { code: "TOOL_ARGS_INVALID", message: expect.any(String) as string } },
      { tool: "workspace_read_file", ok: true, result: { path: "notes.md", content: "buy milk\n", sizeBytes: 9 } },
      {
        tool: "run_script",
        ok: true,
        result: {
          exitCode: 0,
          termination: "exited",
          timedOut: false,
          durationMs: expect.any(Number) as number,
          stdout: "2 a,b\n",
          stderr: "",
          stdoutTruncated: false,
          stderrTruncated: false,
        },
      },
    ]);
    const activityDetails = run.events.flatMap((event) => (event.type === "activity" ? [event.activity.detail ?? ""] : []));
    expect(activityDetails.every((detail) => Buffer.byteLength(detail) <= 2048)).toBe(true);
    expect(activityDetails[3]).toMatch(/^TOOL_ARGS_INVALID: /);
  });

  it("refuses the turn when the capability is not the thread's", async () => {
    const { sessionId, workspace } = await sessionWithCapability();
    const run = await runAgent(entry, {
      args: ["run", "--workspace", workspace, "--model", "qwen3", "--base-url", server.url],
      stdin: "reply: hi",
      env: {
        PATH: process.env.PATH,
        PEDELEC_HOME: home,
        PEDELEC_THREAD_ID: sessionId,
        [THREAD_CAPABILITY_ENV]: "x".repeat(43),
        [AGENT_API_KEY_ENV]: API_KEY,
      },
    });
    expect(run.code).toBe(1);
    expect(run.events.at(-1)).toMatchObject({ type: "turn-failed", error: { code: "THREAD_ACCESS_DENIED" } });
    expect(server.requests).toHaveLength(0);
  });
});
