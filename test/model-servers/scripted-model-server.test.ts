import { afterEach, describe, expect, it } from "vitest";
import { startChatCompletionsServer } from "./chat-completions-server.js";
import type { ModelServer } from "./model-server-types.js";
import { NO_SCRIPTED_REPLY } from "./scripted-model-server.js";
import { readSseFrames, readUntilEndOrBreak } from "./sse-reading.js";

let server: ModelServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const ask = (url: string, text: string, signal?: AbortSignal) =>
  fetch(`${url}/chat/completions`, {
    method: "POST",
    body: JSON.stringify({ model: "m", stream: true, messages: [{ role: "user", content: text }] }),
    signal,
  });

/** The text of a streamed chat answer. */
async function answerText(response: Response): Promise<string> {
  const frames = readSseFrames(await response.text()).filter((frame) => frame.data !== "[DONE]");
  return frames.map((frame) => (JSON.parse(frame.data) as { choices: { delta: { content?: string } }[] }).choices[0]?.delta.content ?? "").join("");
}

describe("a scripted model server", () => {
  it("listens on 127.0.0.1 and answers requests in script order, with functions choosing from the request", async () => {
    server = await startChatCompletionsServer();
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
    server.script({ kind: "text", deltas: ["fir", "st"] }, (request) => ({ kind: "text", deltas: [`you said ${request.userText}`] }));
    expect(await answerText(await ask(server.url, "a"))).toBe("first");
    expect(await answerText(await ask(server.url, "b"))).toBe("you said b");
    expect(await answerText(await ask(server.url, "c"))).toBe(NO_SCRIPTED_REPLY);
    server.script({ kind: "text", deltas: ["later"] });
    expect(await answerText(await ask(server.url, "d"))).toBe("later");
    expect(server.requests.map((request) => [request.method, request.path, request.userText])).toEqual([
      ["POST", "/v1/chat/completions", "a"],
      ["POST", "/v1/chat/completions", "b"],
      ["POST", "/v1/chat/completions", "c"],
      ["POST", "/v1/chat/completions", "d"],
    ]);
  });

  it("turns a throwing reply function into a 500 that says so", async () => {
    server = await startChatCompletionsServer();
    server.script(() => {
      throw new Error("no idea");
    });
    const response = await ask(server.url, "a");
    expect(response.status).toBe(500);
    expect(JSON.stringify(await response.json())).toContain("no idea");
  });

  it("waits for a number of requests, and says how many came when the wait times out", async () => {
    server = await startChatCompletionsServer();
    const two = server.waitForRequests(2);
    await (await ask(server.url, "a")).text();
    await (await ask(server.url, "b")).text();
    expect((await two).map((request) => request.userText)).toEqual(["a", "b"]);
    expect(await server.waitForRequests(1)).toHaveLength(2);
    await expect(server.waitForRequests(3, 100)).rejects.toThrow("waited 100 ms for 3 model request(s); 2 arrived");
  });

  it("answers other paths 404 and a body that is not JSON 400, logging neither", async () => {
    server = await startChatCompletionsServer();
    expect((await fetch(`${server.url}/models`)).status).toBe(404);
    expect((await fetch(`${server.url}/chat/completions`, { method: "POST", body: "{nope" })).status).toBe(400);
    expect(server.requests).toEqual([]);
  });

  it("stalls mid-stream: the first deltas arrive, then nothing, until close() ends the connection", async () => {
    server = await startChatCompletionsServer();
    server.script({ kind: "stall-mid-stream", deltas: ["half ", "an answer"] });
    const response = await ask(server.url, "a");
    expect(response.status).toBe(200);
    const reader = response.body!.getReader();
    let text = "";
    while (!text.includes("an answer")) text += new TextDecoder().decode((await reader.read()).value);
    const next = reader.read().then(
      () => "more",
      () => "broken",
    );
    const quiet = await Promise.race([next, new Promise((resolve) => setTimeout(() => resolve("quiet"), 300))]);
    expect(quiet).toBe("quiet");
    expect(text).not.toContain('finish_reason":"stop');
    await server.close();
    expect(await next).toBe("broken");
  });

  it("drops mid-stream: the first deltas arrive, then the connection breaks", async () => {
    server = await startChatCompletionsServer();
    server.script({ kind: "drop-mid-stream", deltas: ["cut ", "off"] });
    const { text, broke } = await readUntilEndOrBreak(await ask(server.url, "a"));
    expect(broke).toBe(true);
    expect(text).toContain('"content":"cut "');
    expect(text).toContain('"content":"off"');
    expect(text).not.toContain("[DONE]");
  });

  it("hangs a request until close(), which ends it and resolves promptly", async () => {
    server = await startChatCompletionsServer();
    server.script({ kind: "hang" });
    const hung = ask(server.url, "a").then(
      () => "answered",
      () => "failed",
    );
    await server.waitForRequests(1, 5000);
    const early = await Promise.race([hung, new Promise((resolve) => setTimeout(() => resolve("pending"), 300))]);
    expect(early).toBe("pending");
    const started = performance.now();
    await server.close();
    expect(performance.now() - started).toBeLessThan(1000);
    expect(await hung).toBe("failed");
    server = undefined;
  });

  it("gives every tool call an id of its own, across requests and across servers", async () => {
    server = await startChatCompletionsServer();
    const other = await startChatCompletionsServer();
    try {
      const ids: string[] = [];
      for (const target of [server, server, other]) {
        target.script({ kind: "shell", command: "true" });
        const frames = readSseFrames(await (await ask(target.url, "a")).text());
        const first = JSON.parse(frames[0]!.data) as { choices: { delta: { tool_calls: { id: string }[] } }[] };
        ids.push(first.choices[0]!.delta.tool_calls[0]!.id);
      }
      expect(new Set(ids).size).toBe(3);
    } finally {
      await other.close();
    }
  });
});
