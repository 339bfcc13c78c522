import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { CliStreamOutput } from "../cli-runner.js";
import type { ProviderEvent } from "../provider-adapter.js";
import { ClaudeStreamParser } from "./claude-stream-parser.js";

function fixtureLines(name: string): string[] {
  const text = readFileSync(new URL(`./fixtures/${name}`, import.meta.url), "utf8");
  return text.split("\n").filter((line) => line !== "");
}

function replay(lines: readonly string[], parser = new ClaudeStreamParser({ messageIdPrefix: "local" })) {
  const events: CliStreamOutput[] = [];
  for (const line of lines) events.push(...parser.feed(line));
  events.push(...parser.finish());
  return { events, summary: parser.summary(), parser };
}

/** The events without the `output-seen` heartbeat and the usage reports (tested on their own below). */
function meaningful(events: CliStreamOutput[]): CliStreamOutput[] {
  return events.filter((event) => event.type !== "output-seen" && event.type !== "usage");
}

function usageOf(events: CliStreamOutput[]) {
  return events.flatMap((event) => (event.type === "usage" ? [event.usage] : []));
}

function deltasOf(events: CliStreamOutput[], messageId: string): string {
  return events
    .filter((event): event is Extract<ProviderEvent, { type: "text-delta" }> => event.type === "text-delta")
    .filter((event) => event.messageId === messageId)
    .map((event) => event.delta)
    .join("");
}

describe("ClaudeStreamParser over recorded streams", () => {
  it("streams a plain answer as ordered deltas of one message, then completes it", () => {
    const lines = fixtureLines("plain-answer-partial.jsonl");
    const { events, summary } = replay(lines);

    expect(events.filter((event) => event.type === "output-seen")).toHaveLength(lines.length);
    expect(meaningful(events)).toEqual([
      { type: "provider-session-started", providerSessionId: "4fab02ca-67b9-489d-8b89-0b1f0b9550e6" },
      { type: "text-delta", messageId: "msg_01XFDUDYJgAACzvnptvVoYEL", delta: "Hello" },
      { type: "text-delta", messageId: "msg_01XFDUDYJgAACzvnptvVoYEL", delta: "! The board" },
      { type: "text-delta", messageId: "msg_01XFDUDYJgAACzvnptvVoYEL", delta: " has 3 open" },
      { type: "text-delta", messageId: "msg_01XFDUDYJgAACzvnptvVoYEL", delta: " cards." },
      { type: "message-completed", messageId: "msg_01XFDUDYJgAACzvnptvVoYEL", text: "Hello! The board has 3 open cards." },
    ]);
    expect(summary.result).toEqual({ ok: true, text: "Hello! The board has 3 open cards." });
    expect(summary.providerSessionId).toBe("4fab02ca-67b9-489d-8b89-0b1f0b9550e6");
    expect(summary.problem).toBeNull();
    expect(summary.notAuthenticatedText).toBeNull();
  });

  it("keeps thinking out of the chat text", () => {
    const { events } = replay(fixtureLines("plain-answer-partial.jsonl"));
    const chat = meaningful(events).filter((event) => event.type === "text-delta" || event.type === "message-completed");
    expect(JSON.stringify(chat)).not.toContain("count of open cards");
  });

  it("turns a Bash tool_use and its tool_result into one matched activity between two messages", () => {
    const { events, summary } = replay(fixtureLines("bash-tool-turn.jsonl"));
    const command = `pedelec-cli --thread-id thread-7f3a91c2 tool-call add_card '{"title":"Buy milk"}'`;
    expect(meaningful(events)).toEqual([
      { type: "provider-session-started", providerSessionId: "b7e0c5d4-2f61-4b7a-9e3c-5a1d8f0c2b94" },
      { type: "text-delta", messageId: "msg_01Hq8mV3sZ7kTt2LxQbN4pWe", delta: "I'll add" },
      { type: "text-delta", messageId: "msg_01Hq8mV3sZ7kTt2LxQbN4pWe", delta: " the card." },
      {
        type: "activity",
        activity: { id: "toolu_01Mz3Wq7YbE2rK9vNc5tLp8D", kind: "command", status: "started", title: command },
      },
      { type: "message-completed", messageId: "msg_01Hq8mV3sZ7kTt2LxQbN4pWe", text: "I'll add the card." },
      {
        type: "activity",
        activity: {
          id: "toolu_01Mz3Wq7YbE2rK9vNc5tLp8D",
          kind: "command",
          status: "completed",
          title: command,
          detail: '{"id":"card-4","title":"Buy milk"}',
        },
      },
      { type: "text-delta", messageId: "msg_01B5yRk9cJ2vUa6DfGm1sXoH", delta: "Added card-4" },
      { type: "text-delta", messageId: "msg_01B5yRk9cJ2vUa6DfGm1sXoH", delta: ": Buy milk." },
      { type: "message-completed", messageId: "msg_01B5yRk9cJ2vUa6DfGm1sXoH", text: "Added card-4: Buy milk." },
    ]);
    expect(summary.result).toEqual({ ok: true, text: "Added card-4: Buy milk." });
  });

  it("recognises the signed-out reply and shows none of it as chat", () => {
    const { events, summary } = replay(fixtureLines("not-logged-in.jsonl"));
    expect(meaningful(events)).toEqual([{ type: "provider-session-started", providerSessionId: "e1d2c3b4-a596-4877-8899-aabbccddeeff" }]);
    expect(summary.notAuthenticatedText).toBe("Not logged in · Please run /login");
    expect(summary.result).toEqual({ ok: false, subtype: "success", message: "Not logged in · Please run /login", terminalReason: null });
  });

  it("reports an error result with its errors text", () => {
    const { events, summary } = replay(fixtureLines("error-result.jsonl"));
    expect(summary.result).toMatchObject({ ok: false, subtype: "error_during_execution" });
    expect(summary.result?.ok === false && summary.result.message).toContain("529");
    expect(summary.notAuthenticatedText).toBeNull();
    // The text written before the failure still completes.
    expect(meaningful(events)).toContainEqual({
      type: "message-completed",
      messageId: "msg_01Vn2Lk8Qp4Rs6Tu8Wx0Yz2A",
      text: "Let me look",
    });
  });
});

describe("ClaudeStreamParser edge cases", () => {
  const init = (sessionId: string) => JSON.stringify({ type: "system", subtype: "init", session_id: sessionId, tools: [] });
  const assistant = (message: object, extra: object = {}) =>
    JSON.stringify({ type: "assistant", message: { role: "assistant", ...message }, parent_tool_use_id: null, ...extra });
  const result = (fields: object) => JSON.stringify({ type: "result", subtype: "success", is_error: false, ...fields });
  const streamEvent = (event: object) => JSON.stringify({ type: "stream_event", event, parent_tool_use_id: null });

  it("sends the whole text as one delta when no partial messages came, with the same id as the completion", () => {
    const { events } = replay([init("s-1"), assistant({ id: "msg_a", content: [{ type: "text", text: "hello" }] }), result({ result: "hello" })]);
    expect(meaningful(events)).toEqual([
      { type: "provider-session-started", providerSessionId: "s-1" },
      { type: "text-delta", messageId: "msg_a", delta: "hello" },
      { type: "message-completed", messageId: "msg_a", text: "hello" },
    ]);
  });

  it("makes up message ids when the stream carries none", () => {
    const { events } = replay([
      assistant({ content: [{ type: "text", text: "one" }] }),
      assistant({ content: [{ type: "text", text: "two" }] }),
      result({ result: "two" }),
    ]);
    const completions = meaningful(events).filter((event) => event.type === "message-completed");
    expect(completions).toEqual([
      { type: "message-completed", messageId: "local-1", text: "one" },
      { type: "message-completed", messageId: "local-2", text: "two" },
    ]);
    expect(deltasOf(events, "local-1")).toBe("one");
    expect(deltasOf(events, "local-2")).toBe("two");
  });

  it("gives deltas without a message_start a made-up id that the id-less assistant line reuses", () => {
    const { events } = replay([
      streamEvent({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Hi " } }),
      streamEvent({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "there" } }),
      assistant({ content: [{ type: "text", text: "Hi there" }] }),
      result({ result: "Hi there" }),
    ]);
    expect(meaningful(events)).toEqual([
      { type: "text-delta", messageId: "local-1", delta: "Hi " },
      { type: "text-delta", messageId: "local-1", delta: "there" },
      { type: "message-completed", messageId: "local-1", text: "Hi there" },
    ]);
  });

  it("joins the text blocks of one message, and the deltas add up to the same text", () => {
    const { events } = replay([
      streamEvent({ type: "message_start", message: { id: "msg_b" } }),
      streamEvent({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "First." } }),
      assistant({ id: "msg_b", content: [{ type: "text", text: "First." }] }),
      streamEvent({ type: "content_block_delta", index: 2, delta: { type: "text_delta", text: "Second." } }),
      assistant({ id: "msg_b", content: [{ type: "text", text: "Second." }] }),
      streamEvent({ type: "message_stop" }),
      result({ result: "Second." }),
    ]);
    const completions = meaningful(events).filter((event) => event.type === "message-completed");
    expect(completions).toEqual([{ type: "message-completed", messageId: "msg_b", text: "First.\n\nSecond." }]);
    expect(deltasOf(events, "msg_b")).toBe("First.\n\nSecond.");
  });

  it("completes a message whose assistant line was lost from its deltas", () => {
    const { events } = replay([
      streamEvent({ type: "message_start", message: { id: "msg_c" } }),
      streamEvent({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "partial" } }),
      streamEvent({ type: "message_stop" }),
      result({ result: "partial" }),
    ]);
    expect(meaningful(events).at(-1)).toEqual({ type: "message-completed", messageId: "msg_c", text: "partial" });
  });

  it("shows the result text as the answer when no assistant text came", () => {
    const { events } = replay([init("s-2"), result({ result: "final text response" })]);
    expect(meaningful(events)).toEqual([
      { type: "provider-session-started", providerSessionId: "s-2" },
      { type: "text-delta", messageId: "local-1", delta: "final text response" },
      { type: "message-completed", messageId: "local-1", text: "final text response" },
    ]);
  });

  it("takes the session id from the result when there was no init line", () => {
    const { events, summary } = replay([result({ result: "ok", session_id: "s-from-result" })]);
    expect(summary.providerSessionId).toBe("s-from-result");
    expect(events).toContainEqual({ type: "provider-session-started", providerSessionId: "s-from-result" });
  });

  it("ignores subagent text but still shows subagent tools as activities", () => {
    const { events } = replay([
      streamEvent({ type: "message_start", message: { id: "msg_main" } }),
      JSON.stringify({
        type: "stream_event",
        event: { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "inner" } },
        parent_tool_use_id: "toolu_task",
      }),
      assistant(
        {
          id: "msg_sub",
          content: [
            { type: "text", text: "inner thought" },
            { type: "tool_use", id: "toolu_r", name: "Read", input: { file_path: "/w/a.txt" } },
          ],
        },
        { parent_tool_use_id: "toolu_task" },
      ),
      result({ result: "done" }),
    ]);
    expect(JSON.stringify(events)).not.toContain("inner");
    expect(meaningful(events)).toContainEqual({
      type: "activity",
      activity: { id: "toolu_r", kind: "file-read", status: "started", title: "/w/a.txt" },
    });
  });

  it("maps tools to activity kinds and marks failed tool results", () => {
    const tools = [
      { id: "t1", name: "Edit", input: { file_path: "/w/src/app.ts" } },
      { id: "t2", name: "WebSearch", input: { query: "pedelec" } },
      { id: "t3", name: "WebFetch", input: { url: "https://example.com/" } },
      { id: "t4", name: "TodoWrite", input: { todos: [] } },
      { id: "t5", name: "NotebookEdit", input: { notebook_path: "/w/n.ipynb" } },
      { id: "t6", name: "Bash", input: {} },
    ];
    const { events } = replay([
      assistant({ id: "msg_d", content: tools.map((tool) => ({ type: "tool_use", ...tool })) }),
      JSON.stringify({
        type: "user",
        message: {
          role: "user",
          content: [
            { type: "tool_result", tool_use_id: "t1", content: "String not found in file", is_error: true },
            {
              type: "tool_result",
              tool_use_id: "t2",
              content: [
                { type: "text", text: "3 results" },
                { type: "image", source: {} },
              ],
            },
            { type: "tool_result", tool_use_id: "unknown-id", content: "stray" },
          ],
        },
      }),
    ]);
    const activities = meaningful(events).flatMap((event) => (event.type === "activity" ? [event.activity] : []));
    expect(activities.slice(0, 6).map((activity) => [activity.kind, activity.title])).toEqual([
      ["file-edit", "/w/src/app.ts"],
      ["web-search", "pedelec"],
      ["web-search", "https://example.com/"],
      ["tool", "TodoWrite"],
      ["file-edit", "/w/n.ipynb"],
      ["command", "Bash"],
    ]);
    expect(activities.slice(6)).toEqual([
      { id: "t1", kind: "file-edit", status: "failed", title: "/w/src/app.ts", detail: "String not found in file" },
      { id: "t2", kind: "web-search", status: "completed", title: "pedelec", detail: "3 results\n[image]" },
    ]);
  });

  it("caps tool result details at 4 KiB", () => {
    const { events } = replay([
      assistant({ id: "msg_e", content: [{ type: "tool_use", id: "t1", name: "Bash", input: { command: "cat big" } }] }),
      JSON.stringify({ type: "user", message: { content: [{ type: "tool_result", tool_use_id: "t1", content: "é".repeat(5000) }] } }),
    ]);
    const completed = meaningful(events).find((event) => event.type === "activity" && event.activity.status === "completed");
    const detail = completed?.type === "activity" ? (completed.activity.detail ?? "") : "";
    expect(Buffer.byteLength(detail)).toBeLessThanOrEqual(4096);
    expect(Buffer.byteLength(detail)).toBeGreaterThan(4000);
    expect(detail.endsWith("…")).toBe(true);
    expect(detail).not.toContain("\uFFFD");
  });

  it("emits a new session id when a run's init differs from the previous one", () => {
    const { events } = replay([init("s-old"), init("s-old"), init("s-new")]);
    expect(meaningful(events)).toEqual([
      { type: "provider-session-started", providerSessionId: "s-old" },
      { type: "provider-session-started", providerSessionId: "s-new" },
    ]);
  });

  it("detects the older signed-out wordings and an error result that asks for /login", () => {
    const wordings = [
      "Invalid API key · Please run /login",
      "Login expired · Run /login to sign in again",
      "Session expired. Please run /login to sign in again.",
    ];
    for (const text of wordings) {
      const { summary, events } = replay([
        assistant({ id: "x", model: "<synthetic>", content: [{ type: "text", text }] }, { error: "invalid_request" }),
      ]);
      expect(summary.notAuthenticatedText).toBe(text);
      expect(meaningful(events)).toEqual([]);
    }
    const { summary } = replay([result({ is_error: true, result: "Not logged in · Run /login" })]);
    expect(summary.notAuthenticatedText).toBe("Not logged in · Run /login");
  });

  it("does not mistake an agent's ordinary answer about /login for a sign-in prompt", () => {
    const text = "To fix it, run /login in your terminal.";
    const { summary, events } = replay([
      assistant({ id: "msg_f", model: "claude-sonnet-4-5", content: [{ type: "text", text }] }),
      result({ result: text }),
    ]);
    expect(summary.notAuthenticatedText).toBeNull();
    expect(summary.result).toEqual({ ok: true, text });
    expect(meaningful(events)).toContainEqual({ type: "message-completed", messageId: "msg_f", text });
  });

  it("does not take a synthetic usage-limit banner for a sign-in prompt", () => {
    const { summary } = replay([
      assistant({ id: "x", model: "<synthetic>", content: [{ type: "text", text: "Claude usage limit reached. Run /login to switch accounts." }] }),
    ]);
    expect(summary.notAuthenticatedText).toBeNull();
  });

  it("ignores non-JSON lines and unknown line types but counts every line as output", () => {
    const lines = [
      "Warning: something odd",
      "",
      "[1,2,3]",
      JSON.stringify({ type: "system", subtype: "status", status: "requesting" }),
      JSON.stringify({ type: "rate_limit_event", rate_limit_info: {} }),
      JSON.stringify({ type: "stream_event", event: { type: "ping" } }),
      JSON.stringify({ type: "assistant", message: { id: "m", content: [{ type: "server_tool_use", id: "s", name: "web_search" }] } }),
    ];
    const { events, summary } = replay(lines);
    expect(events.filter((event) => event.type === "output-seen")).toHaveLength(lines.length);
    expect(meaningful(events)).toEqual([]);
    expect(summary.problem).toBeNull();
    expect(summary.ignoredLineCount).toBe(2);
    expect(summary.ignoredLineSamples).toEqual(["Warning: something odd", "[1,2,3]"]);
  });

  it("remembers a known line type that lacks its essential fields as a problem", () => {
    const invalid = [
      JSON.stringify({ type: "system", subtype: "init" }),
      JSON.stringify({ type: "assistant", message: { id: "m" } }),
      JSON.stringify({ type: "assistant", message: { id: "m", content: [{ type: "text" }] } }),
      JSON.stringify({ type: "assistant", message: { id: "m", content: [{ type: "tool_use", name: "Bash" }] } }),
      JSON.stringify({ type: "user", message: { content: [{ type: "tool_result", content: "no id" }] } }),
      JSON.stringify({ type: "stream_event", event: { type: "content_block_delta", index: 0, delta: { type: "text_delta" } } }),
      JSON.stringify({ type: "stream_event", event: { type: "message_start", message: {} } }),
      JSON.stringify({ type: "stream_event", event: { type: "content_block_delta", delta: { type: "text_delta", text: "no index" } } }),
      JSON.stringify({
        type: "stream_event",
        event: { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "x" } },
        parent_tool_use_id: 7,
      }),
      JSON.stringify({ type: "result", is_error: false, result: "no subtype" }),
    ];
    for (const line of invalid) {
      const { summary, events } = replay([line]);
      expect(summary.problem, line).not.toBeNull();
      expect(summary.invalidLineCount, line).toBe(1);
      expect(events, line).toEqual([{ type: "output-seen" }]);
    }
    const { summary } = replay([JSON.stringify({ type: "system", subtype: "init" })]);
    expect(summary.problem).toEqual({ lineType: "system", issues: expect.stringContaining("session_id") });
  });

  it("counts dropped lines as output", () => {
    const parser = new ClaudeStreamParser();
    expect(parser.lineDropped()).toEqual([{ type: "output-seen" }]);
    expect(parser.summary().droppedLineCount).toBe(1);
  });

  it("makes message ids differ between runs by default", () => {
    const first = replay([result({ result: "a" })], new ClaudeStreamParser());
    const second = replay([result({ result: "a" })], new ClaudeStreamParser());
    const idOf = (events: CliStreamOutput[]) => events.find((event) => event.type === "message-completed");
    expect(idOf(first.events)).not.toEqual(idOf(second.events));
  });
});

describe("ClaudeStreamParser over recorded failing runs (claude 2.1.332 against a local stand-in)", () => {
  const activitiesOf = (events: CliStreamOutput[]) =>
    events.flatMap((event) => (event.type === "activity" ? [{ activity: event.activity, notice: event.notice }] : []));

  it("stops the turn at the first retry of a refused key, instead of letting claude retry for minutes", () => {
    const lines = fixtureLines("refused-key-retry.jsonl");
    const parser = new ClaudeStreamParser({ messageIdPrefix: "local" });
    parser.feed(lines[0] ?? "");
    const atFirstRetry = parser.feed(lines[1] ?? "");
    const stops = atFirstRetry.filter((output) => output.type === "turn-stop-requested");
    expect(stops).toHaveLength(1);
    const error = stops[0]?.type === "turn-stop-requested" ? stops[0].error : null;
    expect(error?.code).toBe("PROVIDER_NOT_AUTHENTICATED");
    expect(error?.message).toBe(
      `claude's model service refused its credentials (authentication_failed, HTTP 401); run "claude auth login" in a terminal, or fix the API key or token claude is given`,
    );
    expect(error?.details).toMatchObject({ provider: "claude", httpStatus: 401 });
    // A refused key is no retry worth showing, and the request is made once.
    expect(atFirstRetry.filter((output) => output.type === "activity")).toEqual([]);
    const rest = lines.slice(2).flatMap((line) => parser.feed(line));
    expect(rest.filter((output) => output.type === "turn-stop-requested")).toEqual([]);
    expect(parser.summary()).toMatchObject({ apiErrorStatus: 401, notAuthenticatedText: "Failed to authenticate. API Error: 401 stand-in says 401" });
    // The synthetic error message is not chat.
    expect(rest.filter((output) => output.type === "text-delta" || output.type === "message-completed")).toEqual([]);
  });

  it("shows a retry while it lasts and completes it once the answer streams", () => {
    const { events, summary } = replay(fixtureLines("overloaded-then-answer.jsonl"));
    const retry = {
      id: "local-retry-1",
      kind: "other",
      title: "Claude is retrying: overloaded (HTTP 529), attempt 1 of 3",
      detail: "next attempt in 0.6 s",
    };
    expect(meaningful(events)).toEqual([
      { type: "provider-session-started", providerSessionId: "969f2f0c-a7b7-40f4-b59c-b88255b0b159" },
      { type: "activity", activity: { ...retry, status: "started" }, notice: true },
      { type: "activity", activity: { ...retry, status: "completed" }, notice: true },
      { type: "text-delta", messageId: "msg_standin_2", delta: "Hello there" },
      { type: "message-completed", messageId: "msg_standin_2", text: "Hello there" },
    ]);
    expect(summary.result).toEqual({ ok: true, text: "Hello there" });
    expect(summary.apiErrorStatus).toBeNull();
  });

  it("fails the retry when the retries ran out, and keeps the synthetic error message out of the chat", () => {
    const { events, summary } = replay(fixtureLines("overloaded-result.jsonl"));
    expect(activitiesOf(events).map(({ activity, notice }) => [activity.status, activity.title, notice])).toEqual([
      ["started", "Claude is retrying: overloaded (HTTP 529), attempt 1 of 1", true],
      ["failed", "Claude is retrying: overloaded (HTTP 529), attempt 1 of 1", true],
    ]);
    expect(events.some((event) => event.type === "text-delta" || event.type === "message-completed")).toBe(false);
    expect(summary.apiErrorStatus).toBe(529);
    expect(summary.result).toMatchObject({ ok: false, subtype: "success", terminalReason: "api_error" });
    expect(summary.result?.ok === false && summary.result.message).toMatch(/^API Error: 529 stand-in says 529\./);
  });

  it("names a retry without an HTTP status as a service it could not reach", () => {
    const { events, summary } = replay(fixtureLines("connection-refused.jsonl"));
    expect(activitiesOf(events).map(({ activity }) => [activity.status, activity.title])).toEqual([
      ["started", "Claude is retrying: could not reach the model's service, attempt 1 of 1"],
      ["failed", "Claude is retrying: could not reach the model's service, attempt 1 of 1"],
    ]);
    expect(summary.apiErrorStatus).toBeNull();
    expect(summary.result).toMatchObject({
      ok: false,
      message: "API Error: Connection refused — a firewall or proxy may be blocking it (ECONNREFUSED)",
    });
  });
});

describe("ClaudeStreamParser retries and API errors (lines built from the verbatim shapes in real-clis.md, claude 2.1.332)", () => {
  const apiRetry = (attempt: number, status: number | null, error: string, extra: object = {}) =>
    JSON.stringify({
      type: "system",
      subtype: "api_retry",
      attempt,
      max_retries: 10,
      retry_delay_ms: 570,
      error_status: status,
      error,
      session_id: "s",
      uuid: "u",
      ...extra,
    });
  const streamEvent = (event: object) => JSON.stringify({ type: "stream_event", event, parent_tool_use_id: null, session_id: "s" });
  const result = (fields: object) => JSON.stringify({ type: "result", subtype: "success", is_error: false, session_id: "s", ...fields });

  it("updates one activity per retry series, and gives a later series an id of its own", () => {
    const { events } = replay([
      apiRetry(1, 529, "overloaded"),
      apiRetry(2, 529, "overloaded"),
      apiRetry(3, 500, "server_error"),
      streamEvent({ type: "message_start", message: { id: "msg_1" } }),
      apiRetry(1, 429, "rate_limit"),
      JSON.stringify({ type: "user", message: { content: [{ type: "tool_result", tool_use_id: "x", content: "" }] } }),
      result({ result: "ok" }),
    ]);
    const activities = events.flatMap((event) =>
      event.type === "activity" ? [[event.activity.id, event.activity.status, event.activity.title]] : [],
    );
    expect(activities).toEqual([
      ["local-retry-1", "started", "Claude is retrying: overloaded (HTTP 529), attempt 1 of 10"],
      ["local-retry-1", "started", "Claude is retrying: overloaded (HTTP 529), attempt 2 of 10"],
      ["local-retry-1", "started", "Claude is retrying: server error (HTTP 500), attempt 3 of 10"],
      ["local-retry-1", "completed", "Claude is retrying: server error (HTTP 500), attempt 3 of 10"],
      ["local-retry-2", "started", "Claude is retrying: rate limit (HTTP 429), attempt 1 of 10"],
      ["local-retry-2", "completed", "Claude is retrying: rate limit (HTTP 429), attempt 1 of 10"],
    ]);
  });

  it("fails an open retry series when the stream ends, and when a refused key stops the turn", () => {
    const ended = replay([apiRetry(1, 529, "overloaded")]);
    expect(ended.events.filter((event) => event.type === "activity").map((event) => event.type === "activity" && event.activity.status)).toEqual([
      "started",
      "failed",
    ]);
    const refused = replay([apiRetry(1, 529, "overloaded"), apiRetry(2, 403, "authentication_failed")]);
    const outputs = meaningful(refused.events);
    expect(outputs.map((output) => (output.type === "activity" ? output.activity.status : output.type))).toEqual([
      "started",
      "failed",
      "turn-stop-requested",
    ]);
    expect(refused.summary.apiErrorStatus).toBe(403);
  });

  it("copes with retry lines that lack the attempt count or carry odd values", () => {
    const { events, summary } = replay([
      JSON.stringify({ type: "system", subtype: "api_retry", error_status: 503, error: "server_error" }),
      JSON.stringify({ type: "system", subtype: "api_retry", attempt: 2, error_status: "503", error: 7, retry_delay_ms: -1 }),
    ]);
    const titles = events.flatMap((event) => (event.type === "activity" ? [event.activity.title] : []));
    expect(titles.slice(0, 2)).toEqual([
      "Claude is retrying: server error (HTTP 503)",
      "Claude is retrying: could not reach the model's service, attempt 2",
    ]);
    expect(summary.problem).toBeNull();
  });

  it("scrubs endpoints out of retry titles, and keys (not addresses) out of tool activities", () => {
    const { events } = replay([
      apiRetry(1, null, "connect ECONNREFUSED 127.0.0.1:41999"),
      JSON.stringify({
        type: "assistant",
        message: {
          id: "m",
          content: [{ type: "tool_use", id: "t", name: "Bash", input: { command: "curl -H 'x-api-key: sk-ant-0123456789' http://127.0.0.1:9/v1" } }],
        },
      }),
      JSON.stringify({
        type: "user",
        message: { content: [{ type: "tool_result", tool_use_id: "t", content: "POST http://127.0.0.1:9/v1 refused" }] },
      }),
    ]);
    const texts = events.flatMap((event) => (event.type === "activity" ? [event.activity.title, event.activity.detail ?? ""] : []));
    expect(texts.join("\n")).not.toMatch(/sk-ant/);
    expect(texts.filter((text) => text.startsWith("Claude is retrying")).join("\n")).not.toMatch(/127\.0\.0\.1/);
    // What the agent ran is shown as it ran it, but for the key.
    expect(texts).toContain("curl -H 'x-api-key: <redacted>' http://127.0.0.1:9/v1");
    expect(texts).toContain("POST http://127.0.0.1:9/v1 refused");
  });

  it("reads a failed result with api_error_status and terminal_reason, and the synthetic message before it", () => {
    const { events, summary } = replay([
      JSON.stringify({
        type: "assistant",
        message: {
          id: "x",
          model: "<synthetic>",
          role: "assistant",
          content: [{ type: "text", text: "Invalid API key · Fix external API key" }],
          usage: { input_tokens: 0, output_tokens: 0 },
        },
        parent_tool_use_id: null,
        error: "authentication_failed",
        is_api_error_message: true,
        api_error_status: 401,
      }),
      result({ is_error: true, terminal_reason: "api_error", api_error_status: 401, result: "Invalid API key · Fix external API key" }),
    ]);
    expect(meaningful(events)).toEqual([{ type: "provider-session-started", providerSessionId: "s" }]);
    expect(summary).toMatchObject({ apiErrorStatus: 401, notAuthenticatedText: "Invalid API key · Fix external API key", problem: null });
    expect(summary.result).toEqual({ ok: false, subtype: "success", message: "Invalid API key · Fix external API key", terminalReason: "api_error" });
  });

  it("takes the status from the result when no synthetic message came", () => {
    const { summary } = replay([
      result({ is_error: true, terminal_reason: "api_error", api_error_status: 429, result: "API Error: Request rejected (429) · slow down" }),
    ]);
    expect(summary.apiErrorStatus).toBe(429);
    expect(summary.notAuthenticatedText).toBeNull();
  });
});

describe("ClaudeStreamParser usage", () => {
  it("reports the turn's tokens as they grow, counting cache reads and writes as input (recorded run)", () => {
    const { events, summary } = replay(fixtureLines("overloaded-then-answer.jsonl"));
    // message_start: 10 input + 5 cache writes + 100 cache reads; message_delta: 7 output; the result repeats it.
    expect(usageOf(events)).toEqual([
      { inputTokens: 115, outputTokens: 1, cachedInputTokens: 100, totalTokens: 116 },
      { inputTokens: 115, outputTokens: 7, cachedInputTokens: 100, totalTokens: 122 },
    ]);
    expect(summary.usage).toEqual({ inputTokens: 115, outputTokens: 7, cachedInputTokens: 100, totalTokens: 122 });
  });

  it("adds up the requests of a turn, each message counted once however often it reports, until the result's total", () => {
    const streamEvent = (event: object) => JSON.stringify({ type: "stream_event", event, parent_tool_use_id: null });
    const assistant = (id: string, usage: object) =>
      JSON.stringify({ type: "assistant", message: { id, content: [{ type: "text", text: id }], usage } });
    const { events } = replay([
      streamEvent({ type: "message_start", message: { id: "m1", usage: { input_tokens: 10, cache_read_input_tokens: 90, output_tokens: 1 } } }),
      assistant("m1", { input_tokens: 10, cache_read_input_tokens: 90, output_tokens: 4 }),
      streamEvent({ type: "message_delta", delta: { stop_reason: "tool_use" }, usage: { output_tokens: 6 } }),
      streamEvent({ type: "message_stop" }),
      assistant("m1", { input_tokens: 10, cache_read_input_tokens: 90, output_tokens: 4 }),
      streamEvent({ type: "message_start", message: { id: "m2", usage: { input_tokens: 20, cache_creation_input_tokens: 5, output_tokens: 1 } } }),
      streamEvent({ type: "message_delta", delta: { stop_reason: "end_turn" }, usage: { output_tokens: 9, extra: "ignored" } }),
      JSON.stringify({
        type: "result",
        subtype: "success",
        is_error: false,
        result: "m2",
        usage: { input_tokens: 30, cache_creation_input_tokens: 5, cache_read_input_tokens: 90, output_tokens: 15 },
      }),
    ]);
    expect(usageOf(events)).toEqual([
      { inputTokens: 100, outputTokens: 1, cachedInputTokens: 90, totalTokens: 101 },
      { inputTokens: 100, outputTokens: 4, cachedInputTokens: 90, totalTokens: 104 },
      { inputTokens: 100, outputTokens: 6, cachedInputTokens: 90, totalTokens: 106 },
      { inputTokens: 125, outputTokens: 7, cachedInputTokens: 90, totalTokens: 132 },
      { inputTokens: 125, outputTokens: 15, cachedInputTokens: 90, totalTokens: 140 },
    ]);
  });

  it("ignores usage of an unexpected shape without failing the line", () => {
    const { events, summary } = replay([
      JSON.stringify({ type: "stream_event", event: { type: "message_start", message: { id: "m", usage: "lots" } }, parent_tool_use_id: null }),
      JSON.stringify({ type: "stream_event", event: { type: "message_delta", usage: { output_tokens: -3 } }, parent_tool_use_id: null }),
      JSON.stringify({ type: "result", subtype: "success", is_error: false, result: "x", usage: { output_tokens: 2.5, input_tokens: 4 } }),
    ]);
    expect(summary.problem).toBeNull();
    expect(usageOf(events)).toEqual([{ inputTokens: 4, totalTokens: 4 }]);
  });
});
