import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { CliStreamOutput } from "../cli-runner.js";
import { CodexStreamParser } from "./codex-stream-parser.js";

function fixtureLines(name: string): string[] {
  const text = readFileSync(new URL(`./fixtures/${name}`, import.meta.url), "utf8");
  return text.split("\n").filter((line) => line !== "");
}

function replay(lines: readonly string[], parser = new CodexStreamParser({ idPrefix: "run" })) {
  const events: CliStreamOutput[] = [];
  for (const line of lines) events.push(...parser.feed(line));
  events.push(...parser.finish());
  return { events, summary: parser.summary() };
}

/** The events without the `output-seen` heartbeat and the usage report (tested on its own below). */
function meaningful(events: CliStreamOutput[]): CliStreamOutput[] {
  return events.filter((event) => event.type !== "output-seen" && event.type !== "usage");
}

function usageOf(events: CliStreamOutput[]) {
  return events.flatMap((event) => (event.type === "usage" ? [event.usage] : []));
}

/** The activities among the outputs, as [id, status, title]. */
function activitiesOf(events: CliStreamOutput[]) {
  return events.flatMap((event) =>
    event.type === "activity" ? [[event.activity.id, event.activity.status, event.activity.title, event.notice]] : [],
  );
}

const THREAD = "019e91d7-4a21-7ca0-aeef-c27ce6e334c5";
const QUIET = {
  errorMessages: [],
  notAuthenticatedText: null,
  problem: null,
  invalidLineCount: 0,
  ignoredLineCount: 0,
  ignoredLineSamples: [],
  droppedLineCount: 0,
};

describe("CodexStreamParser over codex exec --json streams", () => {
  it("turns a plain answer into one completed message, without deltas", () => {
    const lines = fixtureLines("plain-answer.jsonl");
    const { events, summary } = replay(lines);
    expect(events.filter((event) => event.type === "output-seen")).toHaveLength(lines.length);
    expect(meaningful(events)).toEqual([
      { type: "provider-session-started", providerSessionId: THREAD },
      { type: "message-completed", messageId: "run-item_1", text: "Hello! How can I help with the board?" },
    ]);
    expect(summary).toEqual({
      ...QUIET,
      providerSessionId: THREAD,
      turnEnd: { ok: true },
      unknownLineCount: 1,
      usage: { inputTokens: 18768, cachedInputTokens: 3712, outputTokens: 14, totalTokens: 18782 },
    });
  });

  it("reads the documented example: a command, then the answer", () => {
    const { events, summary } = replay(fixtureLines("readme-question.jsonl"));
    expect(meaningful(events)).toEqual([
      { type: "provider-session-started", providerSessionId: "0199a213-81c0-7800-8aa1-bbab2a035a53" },
      { type: "activity", activity: { id: "run-item_1", kind: "command", status: "started", title: "bash -lc ls" } },
      {
        type: "activity",
        activity: { id: "run-item_1", kind: "command", status: "completed", title: "bash -lc ls", detail: "2025-09-11\nAGENTS.md\n" },
      },
      { type: "message-completed", messageId: "run-item_3", text: "Yep — there’s a `README.md` in the repository root." },
    ]);
    expect(summary.turnEnd).toEqual({ ok: true });
  });

  it("reports commands, file changes, MCP tools and web searches as activities matched by id", () => {
    const { events, summary } = replay(fixtureLines("tools-and-edits.jsonl"));
    const spec = "bash -lc 'pedelec-cli --thread-id thread-7f3a91c2 tool-spec add_card'";
    const call = "bash -lc 'pedelec-cli --thread-id thread-7f3a91c2 tool-call add_card '\\''{}'\\'''";
    const folder = "/home/ada/.pedelec/workspaces/thread-7f3a91c2";
    expect(meaningful(events)).toEqual([
      { type: "provider-session-started", providerSessionId: THREAD },
      { type: "activity", activity: { id: "run-item_1", kind: "command", status: "started", title: spec } },
      { type: "activity", activity: { id: "run-item_1", kind: "command", status: "completed", title: spec, detail: '{"type":"object"}\n' } },
      { type: "activity", activity: { id: "run-item_2", kind: "command", status: "started", title: call } },
      {
        type: "activity",
        activity: {
          id: "run-item_2",
          kind: "command",
          status: "failed",
          title: call,
          detail: '{"error":{"code":"TOOL_ARGS_INVALID","message":"title is required"}}\n',
        },
      },
      { type: "activity", activity: { id: "run-item_4", kind: "file-edit", status: "started", title: `${folder}/notes.md` } },
      {
        type: "activity",
        activity: {
          id: "run-item_4",
          kind: "file-edit",
          status: "completed",
          title: `${folder}/notes.md, ${folder}/todo.md`,
          detail: `add: ${folder}/notes.md\nupdate: ${folder}/todo.md`,
        },
      },
      { type: "activity", activity: { id: "run-item_5", kind: "tool", status: "started", title: "docs.search" } },
      { type: "activity", activity: { id: "run-item_5", kind: "tool", status: "failed", title: "docs.search", detail: "tool timeout" } },
      { type: "activity", activity: { id: "run-item_6", kind: "web-search", status: "completed", title: "kanban card colours" } },
      { type: "message-completed", messageId: "run-item_7", text: "The card needs a title; I wrote notes.md." },
    ]);
    expect(summary).toEqual({
      ...QUIET,
      providerSessionId: THREAD,
      turnEnd: { ok: true },
      unknownLineCount: 1,
      usage: { inputTokens: 30211, cachedInputTokens: 28160, outputTokens: 233, totalTokens: 30444 },
    });
  });

  it("reports the resumed thread's id again on a resumed turn", () => {
    const { events } = replay(fixtureLines("resumed-turn.jsonl"));
    expect(meaningful(events)).toEqual([
      { type: "provider-session-started", providerSessionId: THREAD },
      { type: "message-completed", messageId: "run-item_0", text: "Still here: card-4 is on the board." },
    ]);
  });

  it("recognises a signed-out run by its 401 errors and failed turn, and asks to stop at the first", () => {
    const { events, summary } = replay(fixtureLines("not-logged-in.jsonl"));
    expect(meaningful(events)).toEqual([
      { type: "provider-session-started", providerSessionId: THREAD },
      { type: "turn-stop-requested", error: expect.objectContaining({ code: "PROVIDER_NOT_AUTHENTICATED" }) },
    ]);
    expect(summary.notAuthenticatedText).toBe(
      "unexpected status 401 Unauthorized: Missing bearer or basic authentication in header, url: https://api.openai.com/v1/responses",
    );
    expect(summary.turnEnd).toEqual({
      ok: false,
      message: "unexpected status 401 Unauthorized: Missing bearer or basic authentication in header, url: https://api.openai.com/v1/responses",
    });
    expect(summary.errorMessages).toHaveLength(2);
  });

  it("keeps error events codex recovered from without failing the completed turn", () => {
    const { events, summary } = replay(fixtureLines("recovered-error.jsonl"));
    const reconnect = {
      id: "run-retry-1",
      kind: "other",
      title: "Codex is reconnecting: stream disconnected before completion: error sending request for url (<endpoint>), attempt 1 of 5",
    };
    expect(meaningful(events)).toEqual([
      { type: "provider-session-started", providerSessionId: THREAD },
      { type: "activity", activity: { ...reconnect, status: "started" }, notice: true },
      { type: "activity", activity: { ...reconnect, status: "completed" }, notice: true },
      { type: "message-completed", messageId: "run-item_0", text: "Done." },
    ]);
    expect(summary.turnEnd).toEqual({ ok: true });
    expect(summary.notAuthenticatedText).toBeNull();
    expect(summary.errorMessages).toEqual([
      "Reconnecting... 1/5 (stream disconnected before completion: error sending request for url (https://api.openai.com/v1/responses))",
    ]);
  });

  it("leaves a crashed run without a turn end and its command still open", () => {
    const { events, summary } = replay(fixtureLines("crash.jsonl"));
    expect(meaningful(events)).toEqual([
      { type: "provider-session-started", providerSessionId: THREAD },
      { type: "activity", activity: { id: "run-item_0", kind: "command", status: "started", title: "bash -lc 'npm test'" } },
    ]);
    expect(summary.turnEnd).toBeNull();
  });

  it("counts garbage and refuses known lines that lack what the adapter needs", () => {
    const lines = fixtureLines("garbage.jsonl");
    const { events, summary } = replay(lines);
    expect(events.filter((event) => event.type !== "usage")).toEqual(lines.map(() => ({ type: "output-seen" })));
    expect(summary).toMatchObject({
      providerSessionId: null,
      turnEnd: { ok: true },
      invalidLineCount: 2,
      unknownLineCount: 1,
      ignoredLineCount: 2,
      ignoredLineSamples: ["Warming up the flux capacitor...", "[1,2,3]"],
    });
    expect(summary.problem).toEqual({ lineType: "thread.started", issues: expect.stringContaining("thread_id") });
  });

  it("counts a dropped line as output and completes each message and activity once", () => {
    const parser = new CodexStreamParser({ idPrefix: "run" });
    expect(parser.lineDropped()).toEqual([{ type: "output-seen" }]);
    const message = '{"type":"item.completed","item":{"id":"item_0","type":"agent_message","text":"Hi"}}';
    const command = '{"type":"item.completed","item":{"id":"item_1","type":"command_execution","command":"ls","exit_code":0,"status":"completed"}}';
    const { events, summary } = replay([message, message, command, command], parser);
    expect(meaningful(events)).toEqual([
      { type: "message-completed", messageId: "run-item_0", text: "Hi" },
      { type: "activity", activity: { id: "run-item_1", kind: "command", status: "completed", title: "ls", detail: "" } },
    ]);
    expect(summary.droppedLineCount).toBe(1);
  });

  it("gives every run its own ids, since codex numbers items afresh each run", () => {
    const line = '{"type":"item.completed","item":{"id":"item_0","type":"agent_message","text":"Hi"}}';
    const first = new CodexStreamParser().feed(line).find((event) => event.type === "message-completed");
    const second = new CodexStreamParser().feed(line).find((event) => event.type === "message-completed");
    expect(first).toMatchObject({ messageId: expect.stringMatching(/^codex-[0-9a-f]{8}-item_0$/) });
    expect(first).not.toEqual(second);
  });
});

describe("CodexStreamParser over recorded failing runs (codex 0.169.0 against a local stand-in)", () => {
  it("asks to stop the turn at the first reconnect on a refused key, with the endpoint scrubbed", () => {
    const lines = fixtureLines("refused-key.jsonl");
    const parser = new CodexStreamParser({ idPrefix: "run" });
    const outputs = lines.map((line) => parser.feed(line));
    // thread.started, turn.started, then the first "Reconnecting... 1/5 (unexpected status 401 …)".
    const stops = outputs.map((forLine) => forLine.filter((output) => output.type === "turn-stop-requested").length);
    expect(stops).toEqual([0, 0, 1, 0, 0, 0, 0, 0, 0]);
    const stop = outputs[2]?.find((output) => output.type === "turn-stop-requested");
    const error = stop?.type === "turn-stop-requested" ? stop.error : null;
    expect(error?.toWire()).toEqual({
      code: "PROVIDER_NOT_AUTHENTICATED",
      message: `codex's model service refused its credentials (unexpected status 401 Unauthorized: stand-in says 401, url: <endpoint>); run "codex login" in a terminal, or fix the API key of its model provider`,
      details: { provider: "codex", providerMessage: "unexpected status 401 Unauthorized: stand-in says 401, url: <endpoint>", httpStatus: 401 },
    });
    // A refused key is not shown as a reconnect.
    expect(outputs.flat().filter((output) => output.type === "activity")).toEqual([]);
  });

  it("shows codex's reconnects as one activity that updates per attempt and fails when codex gives up", () => {
    const { events } = replay(fixtureLines("high-demand.jsonl"));
    const title = (attempt: number) =>
      `Codex is reconnecting: We’re currently experiencing high demand, which may cause temporary errors, attempt ${attempt} of 5`;
    expect(activitiesOf(events)).toEqual([
      ["run-retry-1", "started", title(1), true],
      ["run-retry-1", "started", title(2), true],
      ["run-retry-1", "started", title(3), true],
      ["run-retry-1", "started", title(4), true],
      ["run-retry-1", "started", title(5), true],
      ["run-retry-1", "failed", title(5), true],
    ]);
  });

  it("shows waiting for network while codex cannot reach its service, until the run ends", () => {
    const { events, summary } = replay(fixtureLines("connection-refused.jsonl"));
    const title = "Codex is reconnecting: waiting for network (Connection failed: error sending request)";
    expect(activitiesOf(events)).toEqual([
      ["run-retry-1", "started", title, true],
      ["run-retry-1", "failed", title, true],
    ]);
    expect(summary.turnEnd).toBeNull();
  });

  it("keeps a 429 that codex gave up on quickly as the failed turn, with no reconnect shown", () => {
    const { events, summary } = replay(fixtureLines("rate-limited.jsonl"));
    expect(activitiesOf(events)).toEqual([]);
    expect(summary.turnEnd).toEqual({ ok: false, message: "exceeded retry limit, last status: 429 Too Many Requests" });
  });
});

describe("CodexStreamParser reconnects and usage (lines built from the verbatim shapes in real-clis.md, codex 0.169.0)", () => {
  const error = (message: string) => JSON.stringify({ type: "error", message });

  it("stops on a 403 too, and on a reconnect that says the sign-in expired", () => {
    for (const reason of [
      "unexpected status 403 Forbidden: no access, url: http://[::1]:9/v1/responses",
      "Your access token could not be refreshed because your refresh token has expired. Please log in again.",
    ]) {
      const { events } = replay([error(`Reconnecting... 1/5 (${reason})`)]);
      expect(
        events.filter((event) => event.type === "turn-stop-requested"),
        reason,
      ).toHaveLength(1);
    }
  });

  it("gives a reconnect series after a recovered one an id of its own", () => {
    const { events } = replay([
      error("Reconnecting... 1/5 (stream disconnected before completion)"),
      '{"type":"item.completed","item":{"id":"item_0","type":"agent_message","text":"Hi"}}',
      error("Reconnecting... 1/5 (unexpected status 502 Bad Gateway: upstream, url: http://10.0.0.7:8080/v1/responses)"),
      '{"type":"turn.completed","usage":{"input_tokens":1,"cached_input_tokens":0,"output_tokens":1}}',
    ]);
    expect(activitiesOf(events).map(([id, status, title]) => [id, status, title])).toEqual([
      ["run-retry-1", "started", "Codex is reconnecting: stream disconnected before completion, attempt 1 of 5"],
      ["run-retry-1", "completed", "Codex is reconnecting: stream disconnected before completion, attempt 1 of 5"],
      ["run-retry-2", "started", "Codex is reconnecting: unexpected status 502 Bad Gateway: upstream, url: <endpoint>, attempt 1 of 5"],
      ["run-retry-2", "completed", "Codex is reconnecting: unexpected status 502 Bad Gateway: upstream, url: <endpoint>, attempt 1 of 5"],
    ]);
  });

  it("scrubs keys, not addresses, out of command activities: they show what the agent ran", () => {
    const { events } = replay([
      JSON.stringify({
        type: "item.completed",
        item: {
          id: "item_0",
          type: "command_execution",
          command: 'curl -H "Authorization: Bearer sk-proj-0123456789abc" http://127.0.0.1:8080/v1',
          aggregated_output: "connect to 127.0.0.1:8080 refused",
          exit_code: 7,
          status: "failed",
        },
      }),
    ]);
    expect(activitiesOf(events).map(([, , title]) => title)).toEqual(['curl -H "Authorization: Bearer <redacted>" http://127.0.0.1:8080/v1']);
    const detail = events.find((event) => event.type === "activity");
    expect(detail?.type === "activity" && detail.activity.detail).toBe("connect to 127.0.0.1:8080 refused");
  });

  it("reports turn.completed's usage, cached input inside input and reasoning inside output, as codex counts them", () => {
    const { events, summary } = replay([
      '{"type":"turn.completed","usage":{"input_tokens":203,"cached_input_tokens":64,"cache_write_input_tokens":0,"output_tokens":40,"reasoning_output_tokens":12}}',
    ]);
    expect(usageOf(events)).toEqual([{ inputTokens: 203, cachedInputTokens: 64, outputTokens: 40, totalTokens: 243 }]);
    expect(summary.problem).toBeNull();
  });

  it("reports nothing for a turn.completed without usage, and ignores counts of an odd shape", () => {
    expect(usageOf(replay(['{"type":"turn.completed"}']).events)).toEqual([]);
    const odd = replay(['{"type":"turn.completed","usage":{"input_tokens":"many","output_tokens":3}}']);
    expect(usageOf(odd.events)).toEqual([{ outputTokens: 3, totalTokens: 3 }]);
    expect(odd.summary.problem).toBeNull();
  });
});
