import { afterEach, describe, expect, it } from "vitest";
import { startOllamaServer, type RunningOllamaServer } from "./ollama-server.mjs";

let server: RunningOllamaServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function chatLines(url: string, body: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(`${url}/api/chat`, { method: "POST", headers, body: JSON.stringify(body) });
  return {
    status: response.status,
    type: response.headers.get("content-type"),
    lines: (await response.text())
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line)),
  };
}

describe("the Ollama stand-in", () => {
  it("lists and shows its models, and refuses a missing or wrong key", async () => {
    server = await startOllamaServer({ models: ["qwen3", "llama3.2:3b"], apiKey: "key-1" });
    const auth = { Authorization: "Bearer key-1" };
    const tags = await (await fetch(`${server.url}/api/tags`, { headers: auth })).json();
    expect(tags.models.map((model: { name: string }) => model.name)).toEqual(["qwen3:latest", "llama3.2:3b"]);
    const show = await fetch(`${server.url}/api/show`, { method: "POST", headers: auth, body: JSON.stringify({ model: "qwen3" }) });
    expect(await show.json()).toMatchObject({ capabilities: ["completion", "tools", "thinking"] });
    const refused = await fetch(`${server.url}/api/tags`, { headers: { Authorization: "Bearer nope" } });
    expect([refused.status, await refused.json()]).toEqual([401, { error: "unauthorized" }]);
    expect(server.requests.map((request) => request.headers.authorization)).toEqual(["Bearer key-1", "Bearer key-1", "Bearer nope"]);
  });

  it("streams a reply in pieces and ends with done:true and eval counts", async () => {
    server = await startOllamaServer();
    const { status, type, lines } = await chatLines(server.url, {
      model: "qwen3",
      messages: [{ role: "user", content: "[User Message]\nreply: hello world" }],
    });
    expect([status, type]).toEqual([200, "application/x-ndjson"]);
    expect(
      lines
        .slice(0, -1)
        .map((line) => line.message.content)
        .join(""),
    ).toBe("hello world");
    expect(lines.slice(0, -1).every((line) => line.done === false && typeof line.created_at === "string")).toBe(true);
    expect(lines.at(-1)).toMatchObject({
      done: true,
      done_reason: "stop",
      eval_count: lines.length - 1,
      message: { role: "assistant", content: "" },
    });
  });

  it("calls a tool, then answers with what the tool said", async () => {
    server = await startOllamaServer();
    const user = { role: "user", content: 'call-tool add_todo {"title":"milk"}' };
    const first = await chatLines(server.url, { model: "qwen3", messages: [user] });
    expect(first.lines[0].message.tool_calls).toEqual([{ function: { name: "add_todo", arguments: { title: "milk" } } }]);
    expect(first.lines[1]).toMatchObject({ done: true, message: { content: "" } });
    const second = await chatLines(server.url, {
      model: "qwen3",
      messages: [
        user,
        { role: "assistant", content: "", tool_calls: first.lines[0].message.tool_calls },
        { role: "tool", tool_name: "add_todo", content: '{"ok":true}' },
      ],
    });
    expect(
      second.lines
        .slice(0, -1)
        .map((line) => line.message.content)
        .join(""),
    ).toBe('tool said: {"ok":true}');
  });

  it("plays a hostile endpoint: a flood of numbered calls, string arguments, and text that never ends", async () => {
    server = await startOllamaServer();
    const flood = await chatLines(server.url, { model: "qwen3", messages: [{ role: "user", content: 'many-calls 500 write {"path":"f-{n}.txt"}' }] });
    const calls = flood.lines.flatMap((line) => line.message.tool_calls ?? []);
    expect(calls).toHaveLength(500);
    expect(calls.at(-1)).toEqual({ function: { name: "write", arguments: { path: "f-500.txt" } } });
    const stringArguments = await chatLines(server.url, {
      model: "qwen3",
      messages: [{ role: "user", content: 'string-arguments write {"path":1}' }],
    });
    expect(stringArguments.lines[0].message.tool_calls).toEqual([{ function: { name: "write", arguments: '{"path":1}' } }]);
    const endless = await fetch(`${server.url}/api/chat`, {
      method: "POST",
      body: JSON.stringify({ model: "qwen3", messages: [{ role: "user", content: "endless-text" }] }),
    });
    let received = 0;
    for await (const chunk of endless.body!) {
      received += chunk.byteLength;
      if (received > 1024 * 1024) break;
    }
    expect(received).toBeGreaterThan(1024 * 1024);
    await expect.poll(() => server?.requests.at(-1)?.state).toBe("aborted");
  });

  it("answers an unknown model with Ollama's 404", async () => {
    server = await startOllamaServer();
    const response = await fetch(`${server.url}/api/chat`, { method: "POST", body: JSON.stringify({ model: "mistral", messages: [] }) });
    expect([response.status, await response.json()]).toEqual([404, { error: 'model "mistral" not found, try pulling it first' }]);
  });
});
