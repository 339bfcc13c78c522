import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { ProviderEvent } from "../provider-adapter.js";
import { OpencodeStreamParser } from "./opencode-stream-parser.js";

function fixtureLines(name: string): string[] {
  const text = readFileSync(new URL(`./fixtures/${name}`, import.meta.url), "utf8");
  return text.split("\n").filter((line) => line !== "");
}

function replay(lines: readonly string[]) {
  const parser = new OpencodeStreamParser();
  const events: ProviderEvent[] = [];
  for (const line of lines) events.push(...parser.feed(line));
  events.push(...parser.finish());
  return { events, summary: parser.summary() };
}

/** The events without the `output-seen` heartbeat and the usage reports (tested on their own below). */
function meaningful(events: ProviderEvent[]): ProviderEvent[] {
  return events.filter((event) => event.type !== "output-seen" && event.type !== "usage");
}

function usageOf(events: ProviderEvent[]) {
  return events.flatMap((event) => (event.type === "usage" ? [event.usage] : []));
}

const SESSION = "ses_494719016ffe85dkDMj0FPRbHK";
const WORKSPACE = "/home/ada/.pedelec/workspaces/thread-7f3a91c2";

describe("OpencodeStreamParser over the documented stream", () => {
  it("completes a plain answer as one message, with no deltas and without the reasoning", () => {
    const lines = fixtureLines("plain-answer.jsonl");
    const { events, summary } = replay(lines);
    expect(events.filter((event) => event.type === "output-seen")).toHaveLength(lines.length);
    expect(meaningful(events)).toEqual([
      { type: "provider-session-started", providerSessionId: SESSION },
      { type: "message-completed", messageId: "prt_b6b8e6ff3001TextA9s8d7f6g5", text: "Hello! The board has 3 open cards." },
    ]);
    expect(summary).toMatchObject({
      providerSessionId: SESSION,
      done: { reason: "idle", rejected: [] },
      lastStepFinishReason: "stop",
      error: null,
      notAuthenticatedText: null,
      problem: null,
      unknownLineCount: 1,
      ignoredLineCount: 0,
    });
  });

  it("turns finished tool calls into matched activities between the two messages", () => {
    const { events, summary } = replay(fixtureLines("tool-turn.jsonl"));
    const command = `pedelec-cli --thread-id thread-7f3a91c2 tool-call add_card '{"title":"Buy milk"}'`;
    const denial =
      'The user has specified a rule which prevents you from using this specific tool call. Here are some of the relevant rules [{"permission":"bash","pattern":"*","action":"deny"}]';
    const failing = "pedelec-cli --thread-id thread-7f3a91c2 tool-call broken '{}'";
    expect(meaningful(events)).toEqual([
      { type: "provider-session-started", providerSessionId: SESSION },
      { type: "message-completed", messageId: "prt_b6b8f0010003TextAaaaaaaaa", text: "I'll add the card, then note it in a file." },
      { type: "activity", activity: { id: "toolu_01BashAddCard", kind: "command", status: "started", title: command } },
      {
        type: "activity",
        activity: { id: "toolu_01BashAddCard", kind: "command", status: "completed", title: command, detail: '{"id":"card-4","title":"Buy milk"}\n' },
      },
      { type: "activity", activity: { id: "toolu_01WriteNotes", kind: "file-edit", status: "started", title: `${WORKSPACE}/notes.md` } },
      {
        type: "activity",
        activity: {
          id: "toolu_01WriteNotes",
          kind: "file-edit",
          status: "completed",
          title: `${WORKSPACE}/notes.md`,
          detail: "Wrote file successfully.",
        },
      },
      { type: "activity", activity: { id: "toolu_01ReadNotes", kind: "file-read", status: "started", title: `${WORKSPACE}/notes.md` } },
      {
        type: "activity",
        activity: {
          id: "toolu_01ReadNotes",
          kind: "file-read",
          status: "completed",
          title: `${WORKSPACE}/notes.md`,
          detail: "<file>\n00001| - Buy milk\n</file>",
        },
      },
      { type: "activity", activity: { id: "toolu_01BashDenied", kind: "command", status: "started", title: "cat /etc/hostname" } },
      { type: "activity", activity: { id: "toolu_01BashDenied", kind: "command", status: "failed", title: "cat /etc/hostname", detail: denial } },
      { type: "activity", activity: { id: "toolu_01BashExit1", kind: "command", status: "started", title: failing } },
      {
        type: "activity",
        activity: {
          id: "toolu_01BashExit1",
          kind: "command",
          status: "failed",
          title: failing,
          detail: '{"error":{"code":"TOOL_HANDLER_ERROR","message":"handler threw"}}\n',
        },
      },
      { type: "message-completed", messageId: "prt_b6b8f002000bTextBbbbbbbbb", text: 'Added "Buy milk" (card-4) and noted it in notes.md.' },
    ]);
    expect(summary.done).toEqual({ reason: "idle", rejected: [] });
    expect(summary.problem).toBeNull();
  });

  it("reads a resumed turn of a CLI that prints no done line: the last step ended with reason stop", () => {
    const { events, summary } = replay(fixtureLines("resumed-turn-without-done.jsonl"));
    expect(meaningful(events)).toEqual([
      { type: "provider-session-started", providerSessionId: SESSION },
      { type: "message-completed", messageId: "prt_b6b8f1000003TextCcccccccc", text: "Still 3 open cards." },
    ]);
    expect(summary.done).toBeNull();
    expect(summary.lastStepFinishReason).toBe("stop");
  });

  it("recognises a missing provider key (ProviderAuthError) and an invalid one (401)", () => {
    const missing = replay(fixtureLines("not-authenticated.jsonl"));
    expect(meaningful(missing.events)).toEqual([{ type: "provider-session-started", providerSessionId: SESSION }]);
    expect(missing.summary.notAuthenticatedText).toMatch(/^Anthropic API key is missing/);
    expect(missing.summary.error).toMatchObject({ name: "ProviderAuthError" });

    const invalid = replay(fixtureLines("invalid-key.jsonl"));
    expect(invalid.summary.notAuthenticatedText).toBe("invalid x-api-key");
  });

  it("keeps a provider failure as the turn's error, without taking it for a sign-in problem", () => {
    const { events, summary } = replay(fixtureLines("api-error.jsonl"));
    expect(meaningful(events)).toEqual([{ type: "provider-session-started", providerSessionId: SESSION }]);
    expect(summary.error).toEqual({ name: "APIError", message: "Overloaded", statusCode: 529, retryable: true });
    expect(summary.notAuthenticatedText).toBeNull();
  });

  it("counts garbage without failing, and ends with no terminal event", () => {
    const { events, summary } = replay(["Warming up...", "{not json", "[1,2]", '{"type":"session.idle","sessionID":"ses_x"}']);
    expect(meaningful(events)).toEqual([{ type: "provider-session-started", providerSessionId: "ses_x" }]);
    expect(summary).toMatchObject({ ignoredLineCount: 3, unknownLineCount: 1, done: null, lastStepFinishReason: null });
    expect(summary.ignoredLineSamples).toEqual(["Warming up...", "{not json", "[1,2]"]);
  });

  it("reports a known line without the fields the adapter needs as a problem", () => {
    const { summary } = replay([
      '{"type":"text","timestamp":1,"sessionID":"ses_x","part":{"type":"text"}}',
      '{"type":"tool_use","timestamp":2,"sessionID":"ses_x","part":{"id":"prt_1","type":"tool","tool":"bash","state":{"status":"completed"}}}',
    ]);
    expect(summary.invalidLineCount).toBe(2);
    expect(summary.problem).toEqual({ lineType: "text", issues: expect.stringContaining("part.id") as string });
  });

  it("reports a text part and a tool call printed twice only once, and counts dropped lines as output", () => {
    const lines = fixtureLines("plain-answer.jsonl");
    const parser = new OpencodeStreamParser();
    const events = [...lines, lines[2] ?? ""].flatMap((line) => parser.feed(line));
    expect(events.filter((event) => event.type === "message-completed")).toHaveLength(1);
    expect(parser.lineDropped()).toEqual([{ type: "output-seen" }]);
    expect(parser.summary().droppedLineCount).toBe(1);
  });
});

describe("OpencodeStreamParser errors, usage and scrubbing (lines built from the verbatim shapes in real-clis.md, opencode 1.18.33)", () => {
  const line = (type: string, fields: object) => JSON.stringify({ type, timestamp: 1, sessionID: SESSION, ...fields });
  const stepFinish = (reason: string, tokens: object) => line("step_finish", { part: { id: "prt_f", type: "step-finish", reason, tokens, cost: 0 } });

  it("reads a refused key from a recorded run (opencode 1.18.33 against a local stand-in), whose error data names the endpoint", () => {
    const { events, summary } = replay(fixtureLines("refused-key.jsonl"));
    expect(meaningful(events)).toEqual([{ type: "provider-session-started", providerSessionId: "ses_dccb703a1ffePYmoUMl1kHB9P7" }]);
    expect(summary.error).toEqual({ name: "APIError", message: "stand-in says 401", statusCode: 401, retryable: false });
    expect(summary.notAuthenticatedText).toBe("stand-in says 401");
  });

  it("takes a 403 for a refused key too", () => {
    const { summary } = replay([line("error", { error: { name: "APIError", data: { message: "forbidden", statusCode: 403, isRetryable: false } } })]);
    expect(summary.notAuthenticatedText).toBe("forbidden");
  });

  it("adds up the steps' tokens, putting cache reads and writes back into input and reasoning into output", () => {
    const { events, summary } = replay([
      stepFinish("tool-calls", { total: 122, input: 102, output: 20, reasoning: 0, cache: { write: 0, read: 0 } }),
      stepFinish("stop", { total: 400, input: 50, output: 30, reasoning: 20, cache: { write: 100, read: 200 } }),
    ]);
    expect(usageOf(events)).toEqual([
      { inputTokens: 102, outputTokens: 20, cachedInputTokens: 0, totalTokens: 122 },
      { inputTokens: 452, outputTokens: 70, cachedInputTokens: 200, totalTokens: 522 },
    ]);
    expect(summary.usage).toEqual({ inputTokens: 452, outputTokens: 70, cachedInputTokens: 200, totalTokens: 522 });
  });

  it("reports the steps of the documented tool turn, and nothing for a step without tokens or with odd ones", () => {
    const { events } = replay(fixtureLines("tool-turn.jsonl"));
    expect(usageOf(events).at(-1)).toMatchObject({ totalTokens: expect.any(Number) as number });
    const quiet = replay([
      line("step_finish", { part: { id: "p", type: "step-finish", reason: "stop" } }),
      stepFinish("stop", { total: "lots", input: -1 }),
    ]);
    expect(usageOf(quiet.events)).toEqual([]);
    expect(quiet.summary.problem).toBeNull();
  });

  it("scrubs keys, not addresses, out of tool activities: they show what the agent ran", () => {
    const { events } = replay([
      line("tool_use", {
        part: {
          id: "prt_t",
          type: "tool",
          callID: "call_1",
          tool: "bash",
          state: {
            status: "completed",
            input: { command: "curl -H 'x-api-key: sk-ant-0123456789' http://127.0.0.1:4000/v1" },
            output: "curl: (7) Failed to connect to 127.0.0.1 port 4000",
            metadata: { exit: 7 },
            title: "curl",
          },
        },
      }),
    ]);
    const texts = meaningful(events).flatMap((event) => (event.type === "activity" ? [event.activity.title, event.activity.detail ?? ""] : []));
    expect(texts).toContain("curl -H 'x-api-key: <redacted>' http://127.0.0.1:4000/v1");
    expect(texts).toContain("curl: (7) Failed to connect to 127.0.0.1 port 4000");
  });
});
