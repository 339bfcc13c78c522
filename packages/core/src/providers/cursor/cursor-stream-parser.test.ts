import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { ProviderEvent } from "../provider-adapter.js";
import { CursorStreamParser } from "./cursor-stream-parser.js";

const SESSION = "4c2f8a1e-6b3d-4e59-9a07-d81c5f3e2b60";
const WORKSPACE = "/home/ada/.pedelec/workspaces/thread-7f3a91c2";

function fixtureLines(name: string): string[] {
  const text = readFileSync(new URL(`./fixtures/${name}`, import.meta.url), "utf8");
  return text.split("\n").filter((line) => line !== "");
}

function replay(lines: readonly string[]) {
  const parser = new CursorStreamParser({ messageIdPrefix: "local" });
  const events: ProviderEvent[] = [];
  for (const line of lines) events.push(...parser.feed(line));
  events.push(...parser.finish());
  return { events, summary: parser.summary() };
}

/** The events without the output-seen markers every line produces. */
const meaningful = (events: ProviderEvent[]) => events.filter((event) => event.type !== "output-seen");

/** For each completed message: its text and the concatenation of its deltas. */
function messages(events: ProviderEvent[]) {
  return events.flatMap((event) =>
    event.type === "message-completed"
      ? [
          {
            text: event.text,
            deltas: events.flatMap((other) => (other.type === "text-delta" && other.messageId === event.messageId ? [other.delta] : [])).join(""),
          },
        ]
      : [],
  );
}

const assistantChunk = (text: string) =>
  JSON.stringify({ type: "assistant", message: { role: "assistant", content: [{ type: "text", text }] }, session_id: SESSION, timestamp_ms: 1 });
const assistantWhole = (text: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ type: "assistant", message: { role: "assistant", content: [{ type: "text", text }] }, session_id: SESSION, ...extra });
const result = (text: string) => JSON.stringify({ type: "result", subtype: "success", is_error: false, result: text, session_id: SESSION });

describe("CursorStreamParser", () => {
  it("streams a plain answer once, although the whole text comes again at the end", () => {
    const lines = fixtureLines("plain-answer-partial.jsonl");
    const { events, summary } = replay(lines);
    expect(meaningful(events)).toEqual([
      { type: "provider-session-started", providerSessionId: SESSION },
      { type: "text-delta", messageId: "local-1", delta: "Hello" },
      { type: "text-delta", messageId: "local-1", delta: ", wor" },
      { type: "text-delta", messageId: "local-1", delta: "ld! Hello" },
      { type: "text-delta", messageId: "local-1", delta: " again." },
      { type: "message-completed", messageId: "local-1", text: "Hello, world! Hello again." },
    ]);
    expect(events.filter((event) => event.type === "output-seen")).toHaveLength(lines.length);
    expect(summary).toMatchObject({
      providerSessionId: SESSION,
      result: { ok: true, text: "Hello, world! Hello again." },
      problem: null,
      ignoredLineCount: 0,
      unknownLineCount: 3,
    });
  });

  it("turns a turn with commands and file changes into activities, each message's text sent once", () => {
    const { events, summary } = replay(fixtureLines("tool-turn.jsonl"));
    const command = `pedelec-cli --thread-id thread-7f3a91c2 tool-call add_card '{"title":"Buy milk"}'`;
    expect(meaningful(events)).toEqual([
      { type: "provider-session-started", providerSessionId: SESSION },
      { type: "text-delta", messageId: "local-1", delta: "Adding the " },
      { type: "text-delta", messageId: "local-1", delta: "card." },
      { type: "message-completed", messageId: "local-1", text: "Adding the card." },
      { type: "activity", activity: { id: "call_sh1", kind: "command", status: "started", title: command } },
      {
        type: "activity",
        activity: { id: "call_sh1", kind: "command", status: "completed", title: command, detail: '{"id":"card-4","title":"Buy milk"}\n' },
      },
      { type: "activity", activity: { id: "call_xxx", kind: "tool", status: "started", title: "ls /some/path" } },
      { type: "activity", activity: { id: "call_xxx", kind: "tool", status: "completed", title: "ls /some/path" } },
      { type: "activity", activity: { id: "call_rd1\ntool_2", kind: "file-read", status: "started", title: `${WORKSPACE}/notes.md` } },
      { type: "activity", activity: { id: "call_rd1\ntool_2", kind: "file-read", status: "completed", title: `${WORKSPACE}/notes.md` } },
      { type: "activity", activity: { id: "call_ed1", kind: "file-edit", status: "started", title: `${WORKSPACE}/notes.md` } },
      { type: "activity", activity: { id: "call_ed1", kind: "file-edit", status: "completed", title: `${WORKSPACE}/notes.md` } },
      { type: "activity", activity: { id: "call_sh2", kind: "command", status: "started", title: "ls missing" } },
      {
        type: "activity",
        activity: {
          id: "call_sh2",
          kind: "command",
          status: "failed",
          title: "ls missing",
          detail: "ls: cannot access 'missing': No such file or directory\n",
        },
      },
      { type: "text-delta", messageId: "local-2", delta: "Done: card-4" },
      { type: "text-delta", messageId: "local-2", delta: " is on the board." },
      { type: "message-completed", messageId: "local-2", text: "Done: card-4 is on the board." },
    ]);
    expect(summary.result).toEqual({ ok: true, text: "Adding the card.\n\nDone: card-4 is on the board." });
  });

  it("keeps the chat id of a resumed turn", () => {
    const { events, summary } = replay(fixtureLines("resumed-turn.jsonl"));
    expect(meaningful(events)).toEqual([
      { type: "provider-session-started", providerSessionId: SESSION },
      { type: "text-delta", messageId: "local-1", delta: "Still here" },
      { type: "text-delta", messageId: "local-1", delta: "." },
      { type: "message-completed", messageId: "local-1", text: "Still here." },
    ]);
    expect(summary.providerSessionId).toBe(SESSION);
  });

  it("reports no result for a run that stops mid-stream, and completes what it said", () => {
    const { events, summary } = replay(fixtureLines("crash-mid-stream.jsonl"));
    const title = "pedelec-cli --thread-id thread-7f3a91c2 tool-spec add_card";
    expect(meaningful(events)).toEqual([
      { type: "provider-session-started", providerSessionId: SESSION },
      { type: "text-delta", messageId: "local-1", delta: "Let me " },
      { type: "message-completed", messageId: "local-1", text: "Let me " },
      { type: "activity", activity: { id: "call_sh9", kind: "command", status: "started", title } },
    ]);
    expect(summary.result).toBeNull();
  });

  it("counts garbage and flags a known line type that lacks what the adapter needs", () => {
    const { events, summary } = replay(fixtureLines("garbage.jsonl"));
    expect(meaningful(events)).toEqual([]);
    expect(events).toHaveLength(5);
    expect(summary).toMatchObject({
      result: null,
      ignoredLineCount: 2 + 1,
      ignoredLineSamples: ["Warming up the agent...", "{not json at all", "[1,2,3]"],
      unknownLineCount: 1,
      invalidLineCount: 1,
      problem: { lineType: "tool_call", issues: expect.stringContaining("call_id") },
    });
  });

  it("keeps the message of an error line", () => {
    const { summary } = replay(fixtureLines("error-line.jsonl"));
    expect(summary).toMatchObject({ errorMessage: "Model temporarily unavailable: rate limited", notAuthenticatedText: null });
  });

  it("notes a sign-in request in an error line", () => {
    const { summary } = replay([JSON.stringify({ type: "error", error: { message: "Not authenticated: run cursor-agent login" } })]);
    expect(summary.notAuthenticatedText).toBe("Not authenticated: run cursor-agent login");
  });

  it("shows a signed-out run's empty stdout as nothing at all", () => {
    const { events, summary } = replay([]);
    expect(events).toEqual([]);
    expect(summary).toMatchObject({ providerSessionId: null, result: null, notAuthenticatedText: null });
  });

  describe("de-duplicating Cursor's repeated text", () => {
    it("drops the whole message repeated with a model_call_id, and the whole response repeated at the end", () => {
      const { events } = replay([
        assistantChunk("Checking"),
        assistantChunk(" the board."),
        assistantWhole("Checking the board.", { model_call_id: "m-0", timestamp_ms: 2 }),
        JSON.stringify({ type: "tool_call", subtype: "started", call_id: "c1", tool_call: { lsToolCall: { args: { path: "." } } } }),
        assistantWhole("Checking the board.", { model_call_id: "m-0", timestamp_ms: 3 }),
        assistantChunk("Two"),
        assistantChunk(" cards."),
        assistantWhole("Checking the board.\n\nTwo cards."),
        result("Checking the board.\n\nTwo cards."),
      ]);
      expect(messages(events)).toEqual([
        { text: "Checking the board.", deltas: "Checking the board." },
        { text: "Two cards.", deltas: "Two cards." },
      ]);
    });

    it("adds what the chunks missed when the whole text comes", () => {
      const { events } = replay([assistantChunk("Hello "), assistantChunk("wor"), assistantWhole("Hello world, again"), result("")]);
      expect(messages(events)).toEqual([{ text: "Hello world, again", deltas: "Hello world, again" }]);
    });

    it("does not send whitespace the chunks already ended with twice", () => {
      const { events } = replay([assistantChunk("Hello "), assistantWhole("Hello world")]);
      expect(messages(events)).toEqual([{ text: "Hello world", deltas: "Hello world" }]);
    });

    it("keeps chunks that repeat each other: only whole-text lines are repeats", () => {
      const { events } = replay([assistantChunk("ha"), assistantChunk("ha"), assistantChunk("ha"), assistantWhole("hahaha"), result("hahaha")]);
      expect(messages(events)).toEqual([{ text: "hahaha", deltas: "hahaha" }]);
    });

    it("sends only the new part of a whole response whose last message never came in chunks", () => {
      const { events } = replay([
        assistantChunk("First."),
        JSON.stringify({ type: "tool_call", subtype: "started", call_id: "c1", tool_call: { lsToolCall: { args: {} } } }),
        assistantWhole("First.\n\nSecond."),
        result("First.\n\nSecond."),
      ]);
      expect(messages(events)).toEqual([
        { text: "First.", deltas: "First." },
        { text: "Second.", deltas: "Second." },
      ]);
    });

    it("lets a late repeat of an earlier message pass without cutting the message being streamed", () => {
      const { events } = replay([
        assistantChunk("Part one."),
        JSON.stringify({ type: "tool_call", subtype: "started", call_id: "c1", tool_call: { lsToolCall: { args: {} } } }),
        assistantChunk("Part"),
        assistantWhole("Part one.", { model_call_id: "m-0", timestamp_ms: 2 }),
        assistantChunk(" two."),
        result("Part one.Part two."),
      ]);
      expect(messages(events)).toEqual([
        { text: "Part one.", deltas: "Part one." },
        { text: "Part two.", deltas: "Part two." },
      ]);
    });

    it("treats whole messages as messages when no chunks came (no partial output)", () => {
      const { events } = replay([
        assistantWhole("Looking.", { model_call_id: "m-0", timestamp_ms: 1 }),
        assistantWhole("Found it."),
        result("Looking.Found it."),
      ]);
      expect(messages(events)).toEqual([
        { text: "Looking.", deltas: "Looking." },
        { text: "Found it.", deltas: "Found it." },
      ]);
    });

    it("shows the result's text when no assistant line carried any", () => {
      const { events } = replay([result("Only in the result.")]);
      expect(messages(events)).toEqual([{ text: "Only in the result.", deltas: "Only in the result." }]);
    });
  });
});
