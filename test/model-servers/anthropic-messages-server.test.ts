import { afterEach, describe, expect, it } from "vitest";
import { startAnthropicMessagesServer } from "./anthropic-messages-server.js";
import type { ModelServer } from "./model-server-types.js";
import { readSseFrames, readUntilEndOrBreak } from "./sse-reading.js";

let server: ModelServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const post = (body: Record<string, unknown>) =>
  fetch(`${server!.url}/v1/messages?beta=true`, {
    method: "POST",
    headers: { "x-api-key": "k" },
    body: JSON.stringify({ model: "claude-x", ...body }),
  });

/** The events of a streamed answer, each checked to carry an `event:` line naming its type. */
async function events(response: Response): Promise<Record<string, any>[]> {
  expect(response.headers.get("content-type")).toBe("text/event-stream");
  return readSseFrames(await response.text()).map((frame) => {
    const data = JSON.parse(frame.data) as Record<string, any>;
    expect(frame.event).toBe(data.type);
    return data;
  });
}

describe("the Anthropic Messages server", () => {
  it("streams text as message_start, text deltas, message_delta with end_turn and usage, message_stop", async () => {
    server = await startAnthropicMessagesServer();
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    server.script({ kind: "text", deltas: ["Hel", "lo"], usage: { inputTokens: 7, outputTokens: 3, cachedInputTokens: 2 } });
    const stream = await events(await post({ stream: true, messages: [{ role: "user", content: "hi" }] }));
    expect(stream.map((event) => event.type)).toEqual([
      "message_start",
      "content_block_start",
      "content_block_delta",
      "content_block_delta",
      "content_block_stop",
      "message_delta",
      "message_stop",
    ]);
    expect(stream[0]!.message).toMatchObject({ type: "message", role: "assistant", model: "claude-x", content: [] });
    expect(stream[0]!.message.id).toMatch(/^msg_/);
    expect(stream[1]!.content_block).toEqual({ type: "text", text: "" });
    expect(stream.slice(2, 4).map((event) => event.delta)).toEqual([
      { type: "text_delta", text: "Hel" },
      { type: "text_delta", text: "lo" },
    ]);
    expect(stream[5]).toMatchObject({ delta: { stop_reason: "end_turn" }, usage: { input_tokens: 7, output_tokens: 3, cache_read_input_tokens: 2 } });
  });

  it("streams a Bash call for a shell reply: an empty input_json_delta, then chunks of the input, stop_reason tool_use", async () => {
    server = await startAnthropicMessagesServer();
    server.script({ kind: "shell", command: "echo hi" });
    const stream = await events(await post({ stream: true, messages: [{ role: "user", content: "hi" }] }));
    expect(stream[1]!.content_block).toMatchObject({ type: "tool_use", name: "Bash", input: {} });
    expect(stream[1]!.content_block.id).toMatch(/^toolu_/);
    const chunks = stream.filter((event) => event.type === "content_block_delta").map((event) => event.delta);
    expect(chunks[0]).toEqual({ type: "input_json_delta", partial_json: "" });
    expect(chunks.length).toBeGreaterThan(2);
    expect(JSON.parse(chunks.map((chunk) => chunk.partial_json).join(""))).toEqual({ command: "echo hi", description: "Run the scripted command" });
    expect(stream.at(-2)).toMatchObject({ delta: { stop_reason: "tool_use" }, usage: { input_tokens: 100, output_tokens: 10 } });
  });

  it("answers stream:false with one plain Message", async () => {
    server = await startAnthropicMessagesServer();
    server.script({ kind: "text", deltas: ["a", "b"] }, { kind: "tool", name: "Read", input: { file_path: "/x" } });
    const text = await post({ stream: false, messages: [{ role: "user", content: "hi" }] });
    expect(text.headers.get("content-type")).toBe("application/json");
    expect(await text.json()).toMatchObject({
      type: "message",
      role: "assistant",
      model: "claude-x",
      content: [{ type: "text", text: "ab" }],
      stop_reason: "end_turn",
      usage: { input_tokens: 100, output_tokens: 10 },
    });
    const tool = (await (await post({ messages: [{ role: "user", content: "hi" }] })).json()) as { content: unknown[]; stop_reason: string };
    expect(tool.content).toEqual([{ type: "tool_use", id: expect.stringMatching(/^toolu_/), name: "Read", input: { file_path: "/x" } }]);
    expect(tool.stop_reason).toBe("tool_use");
  });

  it("drops mid-stream after message_start and the first text deltas", async () => {
    server = await startAnthropicMessagesServer();
    server.script({ kind: "drop-mid-stream", deltas: ["par", "tial"] });
    const { text, broke } = await readUntilEndOrBreak(await post({ stream: true, messages: [{ role: "user", content: "hi" }] }));
    expect(broke).toBe(true);
    const types = readSseFrames(text).map((frame) => frame.event);
    expect(types).toEqual(["message_start", "content_block_start", "content_block_delta", "content_block_delta"]);
  });

  it("answers HEAD on the base URL with 200 without logging it", async () => {
    server = await startAnthropicMessagesServer();
    expect((await fetch(server.url, { method: "HEAD" })).status).toBe(200);
    expect(server.requests).toEqual([]);
  });

  it("answers errors with Anthropic's error body", async () => {
    server = await startAnthropicMessagesServer();
    server.script(
      { kind: "error", status: 401 },
      { kind: "error", status: 429 },
      { kind: "error", status: 529, message: "busy" },
      { kind: "error", status: 500 },
    );
    const seen: unknown[] = [];
    for (let index = 0; index < 4; index += 1) {
      const response = await post({ stream: true, messages: [{ role: "user", content: "hi" }] });
      const body = (await response.json()) as { type: string; error: { type: string; message: string } };
      seen.push([response.status, body.type, body.error.type]);
      if (response.status === 529) expect(body.error.message).toBe("busy");
      // The real API's wording, which claude turns into "Invalid API key".
      if (response.status === 401) expect(body.error.message).toBe("invalid x-api-key");
    }
    expect(seen).toEqual([
      [401, "error", "authentication_error"],
      [429, "error", "rate_limit_error"],
      [529, "error", "overloaded_error"],
      [500, "error", "api_error"],
    ]);
  });

  it("reads claude's request: system entries and reminders skipped, this request's tool results, effort, tools", async () => {
    server = await startAnthropicMessagesServer();
    const reminder = { type: "text", text: "<system-reminder>\nSome context.\n</system-reminder>" };
    await (
      await post({
        stream: true,
        output_config: { effort: "high" },
        tools: [{ name: "Bash" }, { name: "Read" }],
        messages: [
          { role: "user", content: [reminder, { type: "text", text: "Run it" }] },
          { role: "system", content: "# Environment" },
          {
            role: "assistant",
            content: [
              { type: "text", text: "Running." },
              { type: "tool_use", id: "toolu_1", name: "Bash", input: {} },
            ],
          },
          {
            role: "user",
            content: [
              { type: "tool_result", tool_use_id: "toolu_1", content: "out-1" },
              { type: "tool_result", tool_use_id: "toolu_2", content: [{ type: "text", text: "out-2" }] },
              reminder,
            ],
          },
        ],
      })
    ).text();
    expect(server.requests[0]).toMatchObject({
      path: "/v1/messages?beta=true",
      method: "POST",
      model: "claude-x",
      effort: "high",
      userText: "Run it",
      toolResults: ["out-1", "out-2"],
      toolNames: ["Bash", "Read"],
      transcript: [
        { role: "user", text: "Run it" },
        { role: "assistant", text: "Running." },
      ],
      purpose: "turn",
    });
    expect(server.requests[0]!.headers["x-api-key"]).toBe("k");
  });
});
