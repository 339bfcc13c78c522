import { afterEach, describe, expect, it } from "vitest";
import type { ModelServer } from "./model-server-types.js";
import { startOpenAiResponsesServer } from "./openai-responses-server.js";
import { readSseFrames, readUntilEndOrBreak } from "./sse-reading.js";

let server: ModelServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const post = (body: Record<string, unknown>) =>
  fetch(`${server!.url}/responses`, { method: "POST", body: JSON.stringify({ model: "gpt-x", stream: true, input: "hi", ...body }) });

async function events(response: Response): Promise<Record<string, any>[]> {
  expect(response.headers.get("content-type")).toBe("text/event-stream");
  return readSseFrames(await response.text()).map((frame) => {
    const data = JSON.parse(frame.data) as Record<string, any>;
    expect(frame.event).toBe(data.type);
    return data;
  });
}

describe("the OpenAI Responses server", () => {
  it("streams text with the full event set, ending in response.completed with an id and the usage", async () => {
    server = await startOpenAiResponsesServer();
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
    server.script({ kind: "text", deltas: ["Hel", "lo"], usage: { inputTokens: 9, outputTokens: 4, cachedInputTokens: 1 } });
    const stream = await events(await post({}));
    expect(stream.map((event) => event.type)).toEqual([
      "response.created",
      "response.output_item.added",
      "response.content_part.added",
      "response.output_text.delta",
      "response.output_text.delta",
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.completed",
    ]);
    expect(stream.filter((event) => event.type === "response.output_text.delta").map((event) => event.delta)).toEqual(["Hel", "lo"]);
    expect(stream[7]!.item).toMatchObject({ type: "message", role: "assistant", content: [{ type: "output_text", text: "Hello" }] });
    const completed = stream[8]!.response;
    expect(completed.id).toMatch(/^resp_/);
    expect(completed.id).toBe(stream[0]!.response.id);
    expect(completed.usage).toEqual({
      input_tokens: 9,
      input_tokens_details: { cached_tokens: 1 },
      output_tokens: 4,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 13,
    });
  });

  it("streams an exec_command call for a shell reply, its arguments in deltas", async () => {
    server = await startOpenAiResponsesServer();
    server.script({ kind: "shell", command: "echo hi" });
    const stream = await events(await post({}));
    const deltas = stream.filter((event) => event.type === "response.function_call_arguments.delta");
    expect(deltas.length).toBeGreaterThan(1);
    expect(JSON.parse(deltas.map((event) => event.delta).join(""))).toEqual({ cmd: "echo hi", yield_time_ms: 10000 });
    const done = stream.find((event) => event.type === "response.output_item.done")!.item;
    expect(done).toMatchObject({ type: "function_call", name: "exec_command", arguments: '{"cmd":"echo hi","yield_time_ms":10000}' });
    expect(done.call_id).toMatch(/^call_/);
    expect(stream.at(-1)!.response.usage).toMatchObject({ input_tokens: 100, output_tokens: 10 });
  });

  it("calls a freeform (custom) tool with its text input", async () => {
    server = await startOpenAiResponsesServer();
    server.script({ kind: "tool", name: "apply_patch", input: { input: "*** Begin Patch" } });
    const stream = await events(await post({ tools: [{ type: "custom", name: "apply_patch" }] }));
    expect(stream.find((event) => event.type === "response.output_item.done")!.item).toMatchObject({
      type: "custom_tool_call",
      name: "apply_patch",
      input: "*** Begin Patch",
    });
  });

  it("stalls mid-stream after response.created and the first deltas, until close()", async () => {
    server = await startOpenAiResponsesServer();
    server.script({ kind: "stall-mid-stream", deltas: ["par", "tial"] });
    const reading = readUntilEndOrBreak(await post({}));
    await new Promise((resolve) => setTimeout(resolve, 200));
    await server.close();
    const { text, broke } = await reading;
    expect(broke).toBe(true);
    const types = readSseFrames(text).map((frame) => frame.event);
    expect(types).toEqual([
      "response.created",
      "response.output_item.added",
      "response.content_part.added",
      "response.output_text.delta",
      "response.output_text.delta",
    ]);
  });

  it("answers errors with an OpenAI-style body", async () => {
    server = await startOpenAiResponsesServer();
    server.script({ kind: "error", status: 401 }, { kind: "error", status: 429, message: "slow down" });
    const first = await post({});
    expect([first.status, ((await first.json()) as any).error.code]).toEqual([401, "invalid_api_key"]);
    const second = await post({});
    expect([second.status, await second.json()]).toEqual([
      429,
      { error: { message: "slow down", type: "requests", param: null, code: "rate_limit_exceeded" } },
    ]);
  });

  it("reads codex's request: the last user message, this request's call outputs, effort, tools", async () => {
    server = await startOpenAiResponsesServer();
    const message = (role: string, text: string) => ({
      type: "message",
      role,
      content: [{ type: role === "assistant" ? "output_text" : "input_text", text }],
    });
    await (
      await post({
        reasoning: { effort: "low" },
        tools: [{ type: "function", name: "exec_command" }, { type: "custom", name: "apply_patch" }, { type: "web_search" }],
        input: [
          message("developer", "You are Codex"),
          message("user", "<environment_context/>"),
          message("user", "first"),
          { type: "function_call", name: "exec_command", arguments: "{}", call_id: "c1" },
          { type: "function_call_output", call_id: "c1", output: "old output" },
          message("assistant", "done before"),
          message("user", "second"),
          { type: "function_call", name: "exec_command", arguments: "{}", call_id: "c2" },
          { type: "function_call_output", call_id: "c2", output: "new output" },
        ],
      })
    ).text();
    expect(server.requests[0]).toMatchObject({
      path: "/v1/responses",
      model: "gpt-x",
      effort: "low",
      userText: "second",
      toolResults: ["new output"],
      toolNames: ["exec_command", "apply_patch", "web_search"],
      transcript: [
        { role: "user", text: "<environment_context/>" },
        { role: "user", text: "first" },
        { role: "assistant", text: "done before" },
        { role: "user", text: "second" },
      ],
    });
  });
});
