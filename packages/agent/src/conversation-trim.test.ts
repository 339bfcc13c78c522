import { describe, expect, it } from "vitest";
import { MAX_CONVERSATION_BYTES, trimConversation } from "./conversation-trim.js";
import type { OllamaMessage } from "./ollama-chat-schema.js";

const sizeOf = (messages: OllamaMessage[]) => Buffer.byteLength(JSON.stringify(messages));

/** A conversation of `turns` turns, each a prompt, a write of `writeBytes` and a read that returned `resultBytes`. */
function conversation(turns: number, writeBytes: number, resultBytes: number): OllamaMessage[] {
  const messages: OllamaMessage[] = [{ role: "system", content: "You are Pedelec's agent." }];
  for (let turn = 1; turn <= turns; turn += 1) {
    messages.push({ role: "user", content: `turn ${turn}: write and read` });
    messages.push({
      role: "assistant",
      content: "",
      tool_calls: [{ function: { name: "workspace_write_file", arguments: { path: `out-${turn}.txt`, content: "w".repeat(writeBytes) } } }],
    });
    messages.push({
      role: "tool",
      tool_name: "workspace_write_file",
      content: JSON.stringify({ ok: true, result: { path: `out-${turn}.txt`, bytesWritten: writeBytes } }),
    });
    messages.push({
      role: "assistant",
      content: "",
      tool_calls: [{ function: { name: "workspace_read_file", arguments: { path: `in-${turn}.txt` } } }],
    });
    messages.push({
      role: "tool",
      tool_name: "workspace_read_file",
      content: JSON.stringify({ ok: true, result: { content: "r".repeat(resultBytes) } }),
    });
    messages.push({ role: "assistant", content: `done with turn ${turn}` });
  }
  return messages;
}

describe("trimConversation", () => {
  it("leaves a conversation under the cap as it is", () => {
    const messages = conversation(3, 100, 100);
    const before = JSON.stringify(messages);
    expect(trimConversation(messages)).toEqual({ toolResults: 0, toolArguments: 0, removedMessages: 0, clippedMessages: 0 });
    expect(JSON.stringify(messages)).toBe(before);
  });

  it("trims the oldest tool results first, with a note the model reads, and keeps the newest", () => {
    const messages = conversation(40, 10, 200 * 1024);
    const before = sizeOf(messages);
    const report = trimConversation(messages);
    expect(sizeOf(messages)).toBeLessThanOrEqual(MAX_CONVERSATION_BYTES);
    console.log(`40 turns of 200 KiB read results: ${before} → ${sizeOf(messages)} bytes, ${JSON.stringify(report)}`);
    expect(report.toolResults).toBeGreaterThan(0);
    expect(report.removedMessages).toBe(0);
    const reads = messages.filter((message) => message.role === "tool" && message.tool_name === "workspace_read_file");
    expect(JSON.parse(reads[0]!.content)).toEqual({
      trimmed: expect.stringMatching(/^Pedelec removed this result of workspace_read_file \(\d+ bytes\).*call the tool again/) as string,
    });
    expect(JSON.parse(reads.at(-1)!.content)).toMatchObject({ ok: true });
    // Every message is still there, in order: the model keeps the whole story, minus the bulk.
    expect(messages).toHaveLength(1 + 40 * 6);
  });

  it("bounds a conversation of many large writes (the 62.9 MB case): arguments go after the results", () => {
    // 8 turns each writing 8 MiB, as the file that outlived its session held.
    const messages = conversation(8, 8 * 1024 * 1024, 1024);
    const before = sizeOf(messages);
    const report = trimConversation(messages);
    console.log(`8 writes of 8 MiB: ${before} → ${sizeOf(messages)} bytes, ${JSON.stringify(report)}`);
    expect(before).toBeGreaterThan(64 * 1024 * 1024);
    expect(sizeOf(messages)).toBeLessThanOrEqual(MAX_CONVERSATION_BYTES);
    expect(report.toolArguments).toBe(8);
    const write = messages[2] as Extract<OllamaMessage, { role: "assistant" }>;
    expect(write.tool_calls?.[0]?.function.arguments).toEqual({
      path: "out-1.txt",
      content: expect.stringMatching(/^\[Pedelec removed this argument \(\d+ bytes\)/) as string,
    });
  });

  it("removes whole earlier exchanges when trimming is not enough, keeping the last prompt and one note", () => {
    const messages = conversation(60, 10, 10);
    for (const message of messages) if (message.role === "user") message.content += "u".repeat(100 * 1024);
    const lastPrompt = messages.findLast((message) => message.role === "user")!.content;
    const first = trimConversation(messages, 1024 * 1024);
    expect(sizeOf(messages)).toBeLessThanOrEqual(1024 * 1024);
    expect(first.removedMessages).toBeGreaterThan(0);
    expect(messages[0]?.role).toBe("system");
    expect(messages[1]).toEqual({ role: "user", content: expect.stringMatching(/^\[Pedelec removed \d+ earlier messages/) as string });
    expect(messages[2]?.role).toBe("user");
    expect(messages.findLast((message) => message.role === "user")?.content).toBe(lastPrompt);
    // Later trims update the one note rather than adding another.
    for (let turn = 0; turn < 5; turn += 1) messages.push({ role: "user", content: "u".repeat(100 * 1024) }, { role: "assistant", content: "ok" });
    const second = trimConversation(messages, 1024 * 1024);
    expect(messages.filter((message) => message.role === "user" && message.content.startsWith("[Pedelec removed"))).toHaveLength(1);
    expect(messages[1]?.content).toContain(`${first.removedMessages + second.removedMessages} earlier messages`);
  });

  it("clips a single prompt larger than the cap, saying so", () => {
    const messages: OllamaMessage[] = [
      { role: "system", content: "s" },
      { role: "user", content: "é".repeat(3 * 1024 * 1024) },
    ];
    const report = trimConversation(messages, 1024 * 1024);
    expect(report.clippedMessages).toBe(1);
    expect(sizeOf(messages)).toBeLessThanOrEqual(1024 * 1024);
    expect(messages[1]?.content).toMatch(/\[Pedelec cut this message from 6291456 bytes/);
  });
});
