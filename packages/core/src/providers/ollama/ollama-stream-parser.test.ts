import { describe, expect, it } from "vitest";
import type { ProviderProcessResult } from "../provider-process.js";
import { ollamaTurnOutcome } from "./ollama-adapter.js";
import { OllamaStreamParser } from "./ollama-stream-parser.js";

// Lines in the shape of protocol/agent-wire.ts, the format pedelec-agent prints (built from that schema, not recorded).
const turn = [
  '{"type":"conversation-started","conversationId":"0f8e2b9c-1111-4222-8333-944455556666","resumed":false}',
  '{"type":"text-delta","messageId":"m1","delta":"Hel"}',
  '{"type":"text-delta","messageId":"m1","delta":"lo"}',
  '{"type":"message-completed","messageId":"m1","text":"Hello"}',
  '{"type":"activity","activity":{"id":"call-1","kind":"tool","status":"started","title":"add_todo"}}',
  '{"type":"activity","activity":{"id":"call-1","kind":"tool","status":"completed","title":"add_todo"}}',
  '{"type":"turn-completed","rounds":2,"usage":{"promptTokens":120,"outputTokens":30}}',
];

const exited = (exitCode: number): ProviderProcessResult =>
  ({ exitCode, signal: null, stderr: "", spawnError: null }) as unknown as ProviderProcessResult;

function parse(lines: string[]) {
  const parser = new OllamaStreamParser();
  const events = lines.flatMap((line) => parser.feed(line)).filter((event) => event.type !== "output-seen");
  return { events, summary: parser.summary() };
}

describe("OllamaStreamParser", () => {
  it("maps the agent's events to normalized provider events", () => {
    const { events, summary } = parse(turn);
    expect(events).toEqual([
      { type: "provider-session-started", providerSessionId: "0f8e2b9c-1111-4222-8333-944455556666" },
      { type: "text-delta", messageId: "m1", delta: "Hel" },
      { type: "text-delta", messageId: "m1", delta: "lo" },
      { type: "message-completed", messageId: "m1", text: "Hello" },
      { type: "activity", activity: { id: "call-1", kind: "tool", status: "started", title: "add_todo" } },
      { type: "activity", activity: { id: "call-1", kind: "tool", status: "completed", title: "add_todo" } },
    ]);
    expect(ollamaTurnOutcome(exited(0), summary)).toEqual({ ok: true });
  });

  it("passes the agent's coded failure on, and a lost conversation as such", () => {
    const failed = parse([turn[0]!, '{"type":"turn-failed","error":{"code":"OLLAMA_AUTH_FAILED","message":"refused"}}']);
    expect(ollamaTurnOutcome(exited(1), failed.summary)).toMatchObject({ ok: false, error: { code: "OLLAMA_AUTH_FAILED", message: "refused" } });
    const lost = parse(['{"type":"turn-failed","error":{"code":"THREAD_NOT_FOUND","message":"gone"},"conversationLost":true}']);
    expect(ollamaTurnOutcome(exited(1), lost.summary)).toMatchObject({ ok: false, conversationLost: true });
  });

  it("treats a line outside the agent's format, a crash and a missing end as failures", () => {
    const invalid = parse([turn[0]!, '{"type":"text-delta","delta":"no message id"}', turn[6]!]);
    expect(ollamaTurnOutcome(exited(0), invalid.summary)).toMatchObject({ ok: false, error: { code: "PROVIDER_OUTPUT_INVALID" } });
    expect(ollamaTurnOutcome(exited(134), parse([turn[0]!]).summary)).toMatchObject({ ok: false, error: { code: "PROVIDER_FAILED" } });
    expect(ollamaTurnOutcome(exited(0), parse([turn[0]!, turn[1]!]).summary)).toMatchObject({
      ok: false,
      error: { code: "PROVIDER_OUTPUT_INVALID", message: expect.stringContaining("without finishing") },
    });
  });
});
