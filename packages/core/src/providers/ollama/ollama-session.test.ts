import { mkdir, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import type { SessionEvent } from "@pedelec/protocol/session-events";
import { CoreConnection } from "@pedelec/core-client/core-client";
import { useCoreUnderTest } from "../../testing/core-home.js";
import { collectSessionEvents } from "../../testing/session-events.js";

const repoRoot = resolve(fileURLToPath(new URL("../../../../../", import.meta.url)));
// The agent runs as its own process, so it runs built (npm test builds first).
const AGENT_ENTRY = join(repoRoot, "packages/agent/dist/agent-entry.js");
const TS_RUNTIME_ENTRY = join(repoRoot, "packages/cli/dist/agent-commands/pedelec-ts-runtime.mjs");
const ORIGIN = "http://127.0.0.1:4000";
const API_KEY = "test-key-7f3a";

interface OllamaServer {
  url: string;
  requests: { method: string; path: string; headers: Record<string, string>; body: any; state: string }[];
  close(): Promise<void>;
}
let startOllamaServer: (options?: { models?: string[]; apiKey?: string }) => Promise<OllamaServer>;
let server: OllamaServer | undefined;

beforeAll(async () => {
  ({ startOllamaServer } = (await import(pathToFileURL(join(repoRoot, "test/stand-ins/ollama/ollama-server.mjs")).href)) as {
    startOllamaServer: typeof startOllamaServer;
  });
});
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const core = useCoreUnderTest({
  prefix: "pedelec-ollama-session-",
  providerPath: "/nonexistent",
  launchers: { "pedelec-agent": AGENT_ENTRY, "pedelec-ts-runtime": TS_RUNTIME_ENTRY },
});

/** Writes the home's settings.json, as `pedelec config set` would; Core reads it afresh for every session. */
function writeSettings(settings: Record<string, unknown>): Promise<void> {
  return writeFile(join(core.home, "settings.json"), JSON.stringify(settings), { mode: 0o600 });
}

const addTodo = {
  name: "add_todo",
  description: "Add a card to the board",
  argsSchema: { type: "object" as const, properties: { title: { type: "string" as const, minLength: 1 } }, required: ["title"] },
};

async function withServer(apiKey = API_KEY): Promise<OllamaServer> {
  server = await startOllamaServer({ models: ["qwen3:latest"], apiKey });
  return server;
}

describe("the ollama provider through Core", () => {
  it("refuses createSession with a coded reason for every missing or broken piece of configuration", async () => {
    await writeSettings({ ollama: { baseUrl: "http://127.0.0.1:9", apiKey: "" } });
    const running = await core.start();
    const page = await CoreConnection.open(running.paths.socketPath);
    const create = (input: Record<string, unknown>) => page.request("createSession", { provider: "ollama", ...input } as never, ORIGIN);
    await expect(create({})).rejects.toMatchObject({ code: "MODEL_REQUIRED" });
    await expect(create({ model: "qwen3" })).rejects.toMatchObject({ code: "OLLAMA_API_KEY_REQUIRED" });
    await writeSettings({ ollama: { baseUrl: "ftp://127.0.0.1/", apiKey: API_KEY } });
    await expect(create({ model: "qwen3" })).rejects.toMatchObject({ code: "OLLAMA_BASE_URL_INVALID" });
    // Nothing listens on the discard port.
    await writeSettings({ ollama: { baseUrl: "http://127.0.0.1:9", apiKey: API_KEY } });
    await expect(create({ model: "qwen3" })).rejects.toMatchObject({ code: "OLLAMA_UNAVAILABLE" });
    const ollama = await withServer("another-key");
    await writeSettings({ ollama: { baseUrl: ollama.url, apiKey: API_KEY } });
    await expect(create({ model: "qwen3" })).rejects.toMatchObject({ code: "OLLAMA_AUTH_FAILED" });
    await writeSettings({ ollama: { baseUrl: ollama.url, apiKey: "another-key" } });
    await expect(create({ model: "llama9" })).rejects.toMatchObject({
      code: "OLLAMA_MODEL_NOT_FOUND",
      message: expect.stringContaining("ollama pull llama9"),
    });
    await expect(create({ model: "qwen3" })).resolves.toMatchObject({ provider: "ollama", model: "qwen3" });
    page.close();
  });

  it("reports in listProviders whether the endpoint answers and has the default model", async () => {
    const ollama = await withServer();
    await writeSettings({ ollama: { baseUrl: ollama.url, apiKey: API_KEY }, defaultModels: { ollama: "qwen3" } });
    const running = await core.start();
    const page = await CoreConnection.open(running.paths.socketPath);
    const ollamaStatus = async () => (await page.request("listProviders", {}, ORIGIN)).find((provider) => provider.code === "ollama");
    expect(await ollamaStatus()).toEqual({ code: "ollama", name: "Ollama", available: true, error: null });
    await writeSettings({ ollama: { baseUrl: ollama.url, apiKey: API_KEY }, defaultModels: { ollama: "mistral" } });
    expect(await ollamaStatus()).toMatchObject({ available: false, error: expect.stringContaining("ollama pull mistral") });
    // The key never reaches a page.
    expect(JSON.stringify(await page.request("getSettings", {}, ORIGIN))).not.toContain(API_KEY);
    page.close();
  });

  it("runs a multi-round turn: text, a page tool, a workspace read, a script, then the answer, streamed as normalized events", async () => {
    const ollama = await withServer();
    await writeSettings({ ollama: { baseUrl: ollama.url, apiKey: API_KEY } });
    const running = await core.start();
    const page = await CoreConnection.open(running.paths.socketPath);
    const events = collectSessionEvents(page, 30_000);
    const { sessionId, workspace } = await page.request(
      "createSession",
      { provider: "ollama", model: "qwen3", skills: { guidance: "A board.", tools: [addTodo] } },
      ORIGIN,
    );
    await writeFile(join(workspace.path, "notes.txt"), "milk, eggs\n");
    await mkdir(join(workspace.path, "scripts"));
    await writeFile(join(workspace.path, "scripts", "count.ts"), 'console.log(Deno.args.length + " items");\n');
    const plan = [
      { say: "Let me add it.", call: { name: "add_todo", arguments: { title: "Buy milk" } } },
      { call: { name: "workspace_read_file", arguments: { path: "notes.txt" } } },
      { call: { name: "run_script", arguments: { path: "scripts/count.ts", args: ["milk", "eggs"] } } },
      { reply: "Done: added, read and counted." },
    ];
    page.onFrame((frame) => {
      if (frame.kind !== "event" || frame.envelope.event.type !== "tool-call-requested") return;
      const { toolRequestId, args } = frame.envelope.event;
      void page.request(
        "submitToolResult",
        { sessionId, toolRequestId, outcome: { ok: true, result: { id: "card-1", ...(args as object) } } },
        ORIGIN,
      );
    });
    await page.request("sendText", { sessionId, turnId: "turn-1", text: `plan: ${JSON.stringify(plan)}` }, ORIGIN);
    await events.until("turn-completed");

    const shape = (event: SessionEvent): string => {
      switch (event.type) {
        case "activity-updated":
          return `activity ${event.activity.kind} ${event.activity.status} ${event.activity.title}`;
        case "chat-completed":
          return `chat ${event.text}`;
        case "tool-call-requested":
          return `tool-call ${event.toolName} ${JSON.stringify(event.args)}`;
        case "status-changed":
          return `status ${event.status}`;
        default:
          return event.type;
      }
    };
    const seen = events.seen.filter((event) => event.type !== "chat-delta").map(shape);
    expect(seen).toEqual([
      "turn-started",
      "status running",
      "chat Let me add it.",
      "activity tool started add_todo",
      'tool-call add_todo {"title":"Buy milk"}',
      "status waiting_tool_result",
      "tool-call-settled",
      "status running",
      "activity tool completed add_todo",
      "activity file-read started read notes.txt",
      "activity file-read completed read notes.txt",
      "activity command started run scripts/count.ts",
      "activity command completed run scripts/count.ts",
      "chat Done: added, read and counted.",
      "status idle",
      "turn-completed",
    ]);
    // The answer streamed in pieces before it completed.
    const deltas = events.seen.filter((event) => event.type === "chat-delta");
    expect(deltas.length).toBeGreaterThan(2);

    // What the model saw back: the page's result, the file, the script's output; the key went only in the header.
    const chats = ollama.requests.filter((request) => request.path === "/api/chat");
    expect(chats).toHaveLength(4);
    const toolMessages = chats.at(-1)!.body.messages.filter((message: { role: string }) => message.role === "tool");
    expect(toolMessages.map((message: { tool_name: string }) => message.tool_name)).toEqual(["add_todo", "workspace_read_file", "run_script"]);
    expect(toolMessages[0].content).toContain("card-1");
    expect(toolMessages[1].content).toContain("milk, eggs");
    expect(toolMessages[2].content).toContain("2 items");
    expect(chats[0]!.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(JSON.stringify(chats[0]!.body.tools.map((tool: { function: { name: string } }) => tool.function.name))).toContain("add_todo");

    // The next turn continues the same conversation: the server gets the earlier messages.
    await page.request("sendText", { sessionId, turnId: "turn-2", text: "reply: again" }, ORIGIN);
    await events.until("turn-completed", () => events.seen.filter((event) => event.type === "turn-completed").length >= 2);
    const second = ollama.requests.filter((request) => request.path === "/api/chat").at(-1)!;
    expect(JSON.stringify(second.body.messages)).toContain("Done: added, read and counted.");
    page.close();
  });

  it("cancels a turn by killing the agent, which drops the HTTP request at once", async () => {
    const ollama = await withServer();
    await writeSettings({ ollama: { baseUrl: ollama.url, apiKey: API_KEY } });
    const running = await core.start();
    const page = await CoreConnection.open(running.paths.socketPath);
    const events = collectSessionEvents(page, 20_000);
    const { sessionId } = await page.request("createSession", { provider: "ollama", model: "qwen3" }, ORIGIN);
    await page.request("sendText", { sessionId, turnId: "turn-1", text: "hang" }, ORIGIN);
    await expect.poll(() => ollama.requests.filter((request) => request.path === "/api/chat").length, { timeout: 15_000 }).toBe(1);
    await page.request("cancelTurn", { sessionId }, ORIGIN);
    await events.until("turn-failed");
    await expect.poll(() => ollama.requests.find((request) => request.path === "/api/chat")?.state, { timeout: 5_000 }).toBe("aborted");
    page.close();
  });
});
