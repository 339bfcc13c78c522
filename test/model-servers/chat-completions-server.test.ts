import { afterEach, describe, expect, it } from "vitest";
import { startChatCompletionsServer } from "./chat-completions-server.js";
import type { ModelServer } from "./model-server-types.js";
import { readSseFrames } from "./sse-reading.js";

let server: ModelServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const post = (body: Record<string, unknown>) =>
  fetch(`${server!.url}/chat/completions`, {
    method: "POST",
    body: JSON.stringify({ model: "m", stream: true, messages: [{ role: "user", content: "hi" }], ...body }),
  });

/** The chunks of a streamed answer: `data:` lines only, ending in `[DONE]`. */
async function chunks(response: Response): Promise<Record<string, any>[]> {
  expect(response.headers.get("content-type")).toBe("text/event-stream");
  const frames = readSseFrames(await response.text());
  expect(frames.every((frame) => frame.event === undefined)).toBe(true);
  expect(frames.at(-1)!.data).toBe("[DONE]");
  return frames.slice(0, -1).map((frame) => JSON.parse(frame.data) as Record<string, any>);
}

const TITLE_REQUEST = {
  messages: [
    { role: "system", content: "You are a title generator. You output ONLY a thread title." },
    { role: "user", content: "Generate a title for this conversation:\n" },
    { role: "user", content: "hello" },
  ],
};

describe("the Chat Completions server", () => {
  it("streams text as content deltas, a finish_reason, a usage chunk without choices, then [DONE]", async () => {
    server = await startChatCompletionsServer();
    server.script({ kind: "text", deltas: ["Hel", "lo"], usage: { inputTokens: 5, outputTokens: 2, cachedInputTokens: 1 } });
    const stream = await chunks(await post({}));
    expect(stream.every((chunk) => chunk.object === "chat.completion.chunk" && chunk.model === "m")).toBe(true);
    expect(stream.map((chunk) => chunk.choices[0]?.delta.content)).toEqual(["Hel", "lo", undefined, undefined]);
    expect(stream[2]!.choices[0]).toEqual({ index: 0, delta: {}, finish_reason: "stop" });
    expect(stream[3]).toMatchObject({
      choices: [],
      usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7, prompt_tokens_details: { cached_tokens: 1 } },
    });
  });

  it("streams a bash call for a shell reply as tool_calls deltas with argument chunks", async () => {
    server = await startChatCompletionsServer();
    server.script({ kind: "shell", command: "echo hi" });
    const stream = await chunks(await post({}));
    const calls = stream.flatMap((chunk) => chunk.choices[0]?.delta.tool_calls ?? []);
    expect(calls[0]).toMatchObject({ index: 0, type: "function", function: { name: "bash", arguments: "" } });
    expect(calls[0].id).toMatch(/^call_/);
    expect(calls.length).toBeGreaterThan(2);
    expect(JSON.parse(calls.map((call) => call.function.arguments).join(""))).toEqual({
      command: "echo hi",
      description: "Run the scripted command",
    });
    expect(stream.at(-2)!.choices[0].finish_reason).toBe("tool_calls");
    expect(stream.at(-1)!.usage).toMatchObject({ prompt_tokens: 100, completion_tokens: 10 });
  });

  it("answers OpenCode's title requests with a title of its own, marks them, and keeps the script for the turn", async () => {
    server = await startChatCompletionsServer();
    server.script({ kind: "text", deltas: ["the answer"] });
    const title = await chunks(await post(TITLE_REQUEST));
    expect(title.map((chunk) => chunk.choices[0]?.delta.content ?? "").join("")).toBe("Scripted session");
    await expect(server.waitForRequests(1, 50)).rejects.toThrow("0 arrived");
    const turn = await chunks(await post({ tools: [{ type: "function", function: { name: "bash" } }] }));
    expect(turn[0]!.choices[0].delta.content).toBe("the answer");
    expect(server.requests.map((request) => request.purpose)).toEqual(["title", "turn"]);
    expect(await server.waitForRequests(1)).toEqual([server.requests[1]]);
  });

  it("answers errors with an OpenAI-style body", async () => {
    server = await startChatCompletionsServer();
    server.script({ kind: "error", status: 503 });
    const response = await post({});
    expect([response.status, ((await response.json()) as any).error]).toEqual([
      503,
      { message: "service unavailable (scripted)", type: "server_error", param: null, code: "service_unavailable" },
    ]);
  });

  it("reads opencode's request: the last user message, the tool messages at its end, reasoning_effort, tools", async () => {
    server = await startChatCompletionsServer();
    await (
      await post({
        reasoning_effort: "high",
        tools: [
          { type: "function", function: { name: "bash" } },
          { type: "function", function: { name: "read" } },
        ],
        messages: [
          { role: "system", content: "You are opencode" },
          { role: "user", content: [{ type: "text", text: "Run it" }] },
          { role: "assistant", content: "", tool_calls: [{ id: "c1", type: "function", function: { name: "bash", arguments: "{}" } }] },
          { role: "tool", tool_call_id: "c1", content: "out-1" },
          { role: "assistant", content: "Ran it." },
          { role: "user", content: "Again" },
          { role: "assistant", content: null, tool_calls: [{ id: "c2", type: "function", function: { name: "bash", arguments: "{}" } }] },
          { role: "tool", tool_call_id: "c2", content: "out-2" },
        ],
      })
    ).text();
    expect(server.requests[0]).toMatchObject({
      path: "/v1/chat/completions",
      model: "m",
      effort: "high",
      userText: "Again",
      toolResults: ["out-2"],
      toolNames: ["bash", "read"],
      transcript: [
        { role: "user", text: "Run it" },
        { role: "assistant", text: "Ran it." },
        { role: "user", text: "Again" },
      ],
      purpose: "turn",
    });
  });
});
