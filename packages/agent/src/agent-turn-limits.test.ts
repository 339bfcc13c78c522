import { mkdtemp, readdir, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { AGENT_API_KEY_ENV, DEFAULT_AGENT_MAX_TOOL_ROUNDS, type AgentEvent } from "@pedelec/protocol/agent-wire";
import { startOllamaServer, type RunningOllamaServer } from "../../../test/stand-ins/ollama/ollama-server.mjs";
import { MAX_CONVERSATION_BYTES } from "./conversation-trim.js";
import { buildAgentForTests, startAgent, type AgentProcess } from "./testing/agent-process.js";
import {
  MAX_TOOL_CALLS_PER_ANSWER,
  MAX_TOOL_CALLS_PER_TURN,
  MAX_TEXT_DELTA_CHARACTERS,
  MAX_TURN_TEXT_BYTES,
  maxTurnEvents,
  MAX_TURN_WRITE_BYTES,
  TEXT_DELTA_INTERVAL_MS,
} from "./turn-limits.js";

/**
 * A hostile Ollama-compatible endpoint against the real agent process: floods of tool calls, huge writes, arguments of
 * the wrong type and a stream that never ends. Each case prints what it measured (time, calls run, files and bytes on
 * disk, events sent towards the page, the stored conversation's size).
 */

const API_KEY = "sk-test-limits-5e1d";
/** Past this the turn counts as still running; the attack as reported ran for more than 90 s. */
const HARD_DEADLINE_MS = 20_000;

let entry: string;
let server: RunningOllamaServer;
let home: string;
let workspace: string;

beforeAll(async () => {
  entry = await buildAgentForTests();
});
beforeEach(async () => {
  server = await startOllamaServer({ apiKey: API_KEY });
  home = await mkdtemp(join(tmpdir(), "pedelec-agent-limits-home-"));
  workspace = await mkdtemp(join(tmpdir(), "pedelec-agent-limits-workspace-"));
});
afterEach(async () => {
  await server.close();
  await rm(home, { recursive: true, force: true });
  await rm(workspace, { recursive: true, force: true });
});
afterAll(async () => {
  await rm(join(entry, ".."), { recursive: true, force: true });
});

interface Measured {
  agent: AgentProcess;
  code: number | null;
  /** The agent was still running at the deadline and was killed. */
  stillRunning: boolean;
  elapsedMs: number;
  files: number;
  diskBytes: number;
  conversationBytes: number;
  eventCounts: Record<string, number>;
  events: AgentEvent[];
}

/** Runs one turn against the stand-in, killing it at the deadline, and measures what it left behind. */
async function measureTurn(label: string, prompt: string, env: NodeJS.ProcessEnv = {}): Promise<Measured> {
  const started = performance.now();
  const agent = startAgent(entry, {
    args: ["run", "--workspace", workspace, "--model", "qwen3", "--base-url", server.url],
    stdin: prompt,
    env: { PATH: process.env.PATH, HOME: home, PEDELEC_HOME: home, [AGENT_API_KEY_ENV]: API_KEY, ...env },
  });
  let stillRunning = false;
  const deadline = setTimeout(() => {
    stillRunning = true;
    agent.child.kill("SIGKILL");
  }, HARD_DEADLINE_MS);
  const { code } = await agent.exited;
  clearTimeout(deadline);
  const elapsedMs = performance.now() - started;
  const { files, bytes } = await folderSize(workspace);
  const conversations = await folderSize(join(home, "agent", "conversations"));
  const eventCounts: Record<string, number> = {};
  for (const event of agent.events) eventCounts[event.type] = (eventCounts[event.type] ?? 0) + 1;
  const measured = {
    agent,
    code,
    stillRunning,
    elapsedMs,
    files,
    diskBytes: bytes,
    conversationBytes: conversations.bytes,
    eventCounts,
    events: agent.events,
  };
  console.log(
    `${label}: ${stillRunning ? `STILL RUNNING, killed at ${HARD_DEADLINE_MS} ms` : `exit ${code} after ${elapsedMs.toFixed(0)} ms`}; ` +
      `${agent.events.length} events ${JSON.stringify(eventCounts)}; ${files} files, ${bytes} bytes in the workspace; ` +
      `conversation ${conversations.bytes} bytes; ${server.requests.filter((request) => request.path === "/api/chat").length} model requests`,
  );
  return measured;
}

async function folderSize(folder: string): Promise<{ files: number; bytes: number }> {
  let files = 0;
  let bytes = 0;
  const entries = await readdir(folder, { withFileTypes: true, recursive: true }).catch(() => []);
  for (const entry of entries) {
    if (!entry.isFile()) continue;
    files += 1;
    bytes += (await stat(join(entry.parentPath, entry.name))).size;
  }
  return { files, bytes };
}

function activities(events: AgentEvent[]) {
  return events.flatMap((event) => (event.type === "activity" ? [event.activity] : []));
}

/** The tool messages of the last model request, parsed. */
function lastToolResults(): { ok: boolean; error?: { code: string; message: string } }[] {
  const chats = server.requests.filter((request) => request.path === "/api/chat");
  const messages = chats.at(-1)?.body.messages as { role: string; content: string }[];
  const trailing: string[] = [];
  for (let index = messages.length - 1; index >= 0 && messages[index]!.role === "tool"; index -= 1) trailing.unshift(messages[index]!.content);
  return trailing.map((content) => JSON.parse(content));
}

describe("pedelec-agent against a hostile endpoint", () => {
  it("one answer with 5,000 workspace_write_file calls: the first calls run, the rest are refused, the turn ends at once", async () => {
    const write = JSON.stringify({ path: "flood/file-{n}.txt", content: "x".repeat(64) });
    const run = await measureTurn("5,000 write calls in one answer", `many-calls 5000 workspace_write_file ${write}`);

    expect(run.stillRunning).toBe(false);
    expect(run.elapsedMs).toBeLessThan(10_000);
    expect(run.code).toBe(0);
    expect(run.events.at(-1)).toMatchObject({ type: "turn-completed", rounds: 2 });
    expect(run.files).toBe(MAX_TOOL_CALLS_PER_ANSWER);
    expect(run.diskBytes).toBe(MAX_TOOL_CALLS_PER_ANSWER * 64);

    // The page sees each call that ran (started, completed) and one activity for the refused ones.
    const seen = activities(run.events);
    const refusals = seen.filter((activity) => activity.id.startsWith("tool-calls-refused-"));
    expect(refusals).toHaveLength(1);
    expect(refusals[0]).toMatchObject({ kind: "tool", status: "failed" });
    expect(refusals[0]?.title).toContain(`${5000 - MAX_TOOL_CALLS_PER_ANSWER} of 5000`);
    expect(seen).toHaveLength(2 * MAX_TOOL_CALLS_PER_ANSWER + 1);
    expect(run.events.length).toBeLessThan(100);

    // The model reads a tool error for the refused calls, and its final answer counts the results it got.
    const results = lastToolResults();
    expect(results.slice(0, MAX_TOOL_CALLS_PER_ANSWER).every((result) => result.ok)).toBe(true);
    const refused = results.slice(MAX_TOOL_CALLS_PER_ANSWER);
    expect(refused.length).toBeGreaterThan(0);
    expect(refused.length).toBeLessThanOrEqual(MAX_TOOL_CALLS_PER_ANSWER);
    expect(refused.every((result) => result.error?.code === "AGENT_TOOL_CALLS_EXCEEDED")).toBe(true);
    expect(refused.at(-1)?.error?.message).toMatch(/4984 calls? .*refused/);
    expect(run.conversationBytes).toBeLessThan(256 * 1024);
  });

  it("5,000 calls in every answer: at most the per-turn number of calls run, then the round limit ends the turn", async () => {
    const write = JSON.stringify({ path: "flood/file-{n}.txt", content: "y" });
    const run = await measureTurn("5,000 write calls in every answer", `always-many-calls 5000 workspace_write_file ${write}`);

    expect(run.stillRunning).toBe(false);
    expect(run.elapsedMs).toBeLessThan(15_000);
    expect(run.events.at(-1)).toMatchObject({ type: "turn-failed", error: { code: "AGENT_TOOL_ROUNDS_EXCEEDED" } });
    // Every answer names the same 5,000 paths, so the files are those of the first answer's calls that ran.
    expect(run.files).toBe(MAX_TOOL_CALLS_PER_ANSWER);
    const ran = activities(run.events).filter((activity) => activity.id.startsWith("tool-") && !activity.id.startsWith("tool-calls-refused-"));
    expect(ran.filter((activity) => activity.status === "started")).toHaveLength(MAX_TOOL_CALLS_PER_TURN);
    const refusals = activities(run.events).filter((activity) => activity.id.startsWith("tool-calls-refused-"));
    expect(refusals).toHaveLength(DEFAULT_AGENT_MAX_TOOL_ROUNDS);
    expect(run.events.length).toBeLessThanOrEqual(2 * MAX_TOOL_CALLS_PER_TURN + 3 * DEFAULT_AGENT_MAX_TOOL_ROUNDS + 2);
    expect(lastToolResults().every((result) => result.error?.code === "AGENT_TOOL_CALLS_EXCEEDED")).toBe(true);
    expect(run.conversationBytes).toBeLessThanOrEqual(MAX_CONVERSATION_BYTES);
  }, 30_000);

  it("writes past the turn's byte budget are refused as tool errors, and the disk holds at most the budget", async () => {
    const size = 3 * 1024 * 1024;
    const write = JSON.stringify({ path: "big/file-{n}.bin", content: "z".repeat(size) });
    const run = await measureTurn("16 writes of 3 MiB in one answer", `many-calls ${MAX_TOOL_CALLS_PER_ANSWER} workspace_write_file ${write}`);

    expect(run.code).toBe(0);
    const allowed = Math.floor(MAX_TURN_WRITE_BYTES / size);
    expect(run.files).toBe(allowed);
    expect(run.diskBytes).toBe(allowed * size);
    expect(run.diskBytes).toBeLessThanOrEqual(MAX_TURN_WRITE_BYTES);
    const results = lastToolResults();
    expect(results.filter((result) => result.ok)).toHaveLength(allowed);
    expect(results.slice(allowed).every((result) => result.error?.code === "AGENT_WRITE_BUDGET_EXCEEDED")).toBe(true);
    // The huge arguments are not kept: the stored conversation stays under its cap.
    expect(run.conversationBytes).toBeLessThanOrEqual(MAX_CONVERSATION_BYTES);
  }, 30_000);

  it("a string instead of an object as a call's arguments is a tool error the model reads, not a failed turn", async () => {
    const run = await measureTurn("string arguments", 'string-arguments workspace_write_file {"path":"a.txt","content":"hi"}');
    expect(run.code).toBe(0);
    expect(run.events.at(-1)).toMatchObject({ type: "turn-completed", rounds: 2 });
    const [result] = lastToolResults();
    expect(result).toMatchObject({ ok: false, error: { code: "TOOL_ARGS_INVALID" } });
    expect(result?.error?.message).toMatch(/object/);
    expect(run.files).toBe(0);
    // What goes back to the endpoint is a well-formed call (arguments an object), which a real Ollama accepts.
    const chats = server.requests.filter((request) => request.path === "/api/chat");
    const assistant = (chats[1]!.body.messages as { role: string; tool_calls?: { function: { arguments: unknown } }[] }[]).find(
      (message) => message.role === "assistant",
    );
    expect(assistant?.tool_calls?.[0]?.function.arguments).toEqual({});
  });

  it("an endpoint that streams text forever is stopped by the turn's text bound, with joined deltas", async () => {
    const run = await measureTurn("endless text at full speed", "endless-text");
    expect(run.stillRunning).toBe(false);
    expect(run.events.at(-1)).toMatchObject({ type: "turn-failed", error: { code: "AGENT_TURN_LIMIT_EXCEEDED", details: { limit: "text-bytes" } } });
    expect(run.events.length).toBeLessThanOrEqual(maxTurnEvents(DEFAULT_AGENT_MAX_TOOL_ROUNDS));
    const deltas = run.events.filter((event) => event.type === "text-delta");
    // Coalesced: far fewer deltas than the endpoint's hundreds of thousands of pieces, and each one larger.
    expect(deltas.length).toBeLessThan(run.elapsedMs / TEXT_DELTA_INTERVAL_MS + 1 + MAX_TURN_TEXT_BYTES / MAX_TEXT_DELTA_CHARACTERS);
    expect(deltas.reduce((total, event) => total + event.delta.length, 0)).toBeGreaterThan(1024 * 1024);
    const request = server.requests.find((entry) => entry.path === "/api/chat");
    await expect.poll(() => request?.state, { timeout: 5_000 }).toBe("aborted");
  }, 30_000);

  it("an endpoint that streams slowly forever is stopped by the turn's time bound", async () => {
    const run = await measureTurn("endless slow text", "slow 20\nendless-text", { PEDELEC_AGENT_MAX_TURN_MS: "1500" });
    expect(run.stillRunning).toBe(false);
    expect(run.events.at(-1)).toMatchObject({ type: "turn-failed", error: { code: "AGENT_TURN_LIMIT_EXCEEDED", details: { limit: "duration" } } });
    expect(run.elapsedMs).toBeGreaterThanOrEqual(1500);
    expect(run.elapsedMs).toBeLessThan(6_000);
  });
});
