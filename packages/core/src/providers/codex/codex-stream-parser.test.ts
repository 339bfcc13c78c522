import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { ProviderEvent } from "../provider-adapter.js";
import { CodexStreamParser } from "./codex-stream-parser.js";

function fixtureLines(name: string): string[] {
  const text = readFileSync(new URL(`./fixtures/${name}`, import.meta.url), "utf8");
  return text.split("\n").filter((line) => line !== "");
}

function replay(lines: readonly string[], parser = new CodexStreamParser({ idPrefix: "run" })) {
  const events: ProviderEvent[] = [];
  for (const line of lines) events.push(...parser.feed(line));
  events.push(...parser.finish());
  return { events, summary: parser.summary() };
}

/** The events without the `output-seen` heartbeat. */
function meaningful(events: ProviderEvent[]): ProviderEvent[] {
  return events.filter((event) => event.type !== "output-seen");
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
    expect(summary).toEqual({ ...QUIET, providerSessionId: THREAD, turnEnd: { ok: true }, unknownLineCount: 1 });
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
    expect(summary).toEqual({ ...QUIET, providerSessionId: THREAD, turnEnd: { ok: true }, unknownLineCount: 1 });
  });

  it("reports the resumed thread's id again on a resumed turn", () => {
    const { events } = replay(fixtureLines("resumed-turn.jsonl"));
    expect(meaningful(events)).toEqual([
      { type: "provider-session-started", providerSessionId: THREAD },
      { type: "message-completed", messageId: "run-item_0", text: "Still here: card-4 is on the board." },
    ]);
  });

  it("recognises a signed-out run by its 401 errors and failed turn", () => {
    const { events, summary } = replay(fixtureLines("not-logged-in.jsonl"));
    expect(meaningful(events)).toEqual([{ type: "provider-session-started", providerSessionId: THREAD }]);
    expect(summary.notAuthenticatedText).toMatch(/^Reconnecting\.\.\. 1\/5 \(unexpected status 401 Unauthorized/);
    expect(summary.turnEnd).toEqual({
      ok: false,
      message: "unexpected status 401 Unauthorized: Missing bearer or basic authentication in header, url: https://api.openai.com/v1/responses",
    });
    expect(summary.errorMessages).toHaveLength(2);
  });

  it("keeps error events codex recovered from without failing the completed turn", () => {
    const { events, summary } = replay(fixtureLines("recovered-error.jsonl"));
    expect(meaningful(events)).toEqual([
      { type: "provider-session-started", providerSessionId: THREAD },
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
    expect(events).toEqual(lines.map(() => ({ type: "output-seen" })));
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
