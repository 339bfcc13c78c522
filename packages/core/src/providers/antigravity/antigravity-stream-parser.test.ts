import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { ProviderEvent } from "../provider-adapter.js";
import type { ProviderProcessResult } from "../provider-process.js";
import { antigravityTurnOutcome } from "./antigravity-adapter.js";
import { AntigravityStreamParser } from "./antigravity-stream-parser.js";

function fixture(name: string): string {
  return readFileSync(new URL(`./fixtures/${name}`, import.meta.url), "utf8");
}

function fixtureLines(name: string): string[] {
  return fixture(name)
    .split("\n")
    .filter((line) => line !== "");
}

function replay(lines: readonly string[]) {
  const parser = new AntigravityStreamParser({ idPrefix: "local" });
  const events: ProviderEvent[] = [];
  for (const line of lines) events.push(...parser.feed(line));
  events.push(...parser.finish());
  return { events, summary: parser.summary() };
}

/** The events without the `output-seen` heartbeat. */
function meaningful(events: ProviderEvent[]): ProviderEvent[] {
  return events.filter((event) => event.type !== "output-seen");
}

function run(overrides: Partial<ProviderProcessResult> = {}): ProviderProcessResult {
  return { exitCode: 0, signal: null, stderr: "", stderrTruncated: false, spawnError: null, droppedLineCount: 0, ...overrides };
}

describe("AntigravityStreamParser over stream fixtures", () => {
  it("streams a plain answer: conversation id, the agent's delta, not the echoed user input", () => {
    const lines = fixtureLines("plain-answer.jsonl");
    const { events, summary } = replay(lines);
    expect(events.filter((event) => event.type === "output-seen")).toHaveLength(lines.length);
    expect(meaningful(events)).toEqual([
      { type: "provider-session-started", providerSessionId: "conv_123" },
      { type: "text-delta", messageId: "local-message-1", delta: "hello" },
      { type: "message-completed", messageId: "local-message-1", text: "hello" },
    ]);
    expect(summary).toMatchObject({ providerSessionId: "conv_123", result: { ok: true, text: "眼前的火光" }, problem: null });
    expect(antigravityTurnOutcome(run(), summary)).toEqual({ ok: true });
  });

  it("shows the result's response as the answer when no step streamed text", () => {
    const { events } = replay([
      '{"event":"init","conversation_id":"conv_9"}',
      '{"event":"result","result":{"status":"SUCCESS","response":"only here"}}',
    ]);
    expect(meaningful(events)).toEqual([
      { type: "provider-session-started", providerSessionId: "conv_9" },
      { type: "text-delta", messageId: "local-message-1", delta: "only here" },
      { type: "message-completed", messageId: "local-message-1", text: "only here" },
    ]);
  });

  it("turns tool steps into command, file-edit and file-read activities matched by step", () => {
    const { events, summary } = replay(fixtureLines("tool-turn.jsonl"));
    const command = `pedelec-cli --thread-id thread-7f3a91c2 tool-call add_card '{"title":"Buy milk"}'`;
    const notes = "/home/ada/.pedelec/workspaces/thread-7f3a91c2/notes.md";
    expect(meaningful(events)).toEqual([
      { type: "provider-session-started", providerSessionId: "6c1f0d2e-4b7a-4e55-9a0c-2f8d3e1b7a90" },
      { type: "text-delta", messageId: "local-message-1", delta: "I will add " },
      { type: "text-delta", messageId: "local-message-1", delta: "the card." },
      { type: "message-completed", messageId: "local-message-1", text: "I will add the card." },
      { type: "activity", activity: { id: "local-step-2", kind: "command", status: "started", title: command } },
      {
        type: "activity",
        activity: { id: "local-step-2", kind: "command", status: "completed", title: command, detail: '{"id":"card-4","title":"Buy milk"}\n' },
      },
      { type: "activity", activity: { id: "local-step-3", kind: "file-edit", status: "started", title: notes } },
      { type: "activity", activity: { id: "local-step-3", kind: "file-edit", status: "completed", title: notes, detail: "Created file" } },
      { type: "activity", activity: { id: "local-step-4", kind: "file-read", status: "started", title: "/etc/shadow" } },
      { type: "activity", activity: { id: "local-step-4", kind: "file-read", status: "failed", title: "/etc/shadow", detail: "permission denied" } },
      { type: "text-delta", messageId: "local-message-2", delta: "Added card-4." },
      { type: "message-completed", messageId: "local-message-2", text: "Added card-4." },
    ]);
    expect(summary.result).toEqual({ ok: true, text: "" });
    expect(antigravityTurnOutcome(run(), summary)).toEqual({ ok: true });
  });

  it("reads a resumed turn's conversation id and answer", () => {
    const { events, summary } = replay(fixtureLines("resumed-turn.jsonl"));
    expect(meaningful(events)).toEqual([
      { type: "provider-session-started", providerSessionId: "6c1f0d2e-4b7a-4e55-9a0c-2f8d3e1b7a90" },
      { type: "text-delta", messageId: "local-message-1", delta: "Still " },
      { type: "text-delta", messageId: "local-message-1", delta: "here." },
      { type: "message-completed", messageId: "local-message-1", text: "Still here." },
    ]);
    expect(summary.result).toEqual({ ok: true, text: "Still here." });
  });

  it("does not repeat a text that a step's closing update sends again in full", () => {
    const { events } = replay([
      '{"event":"step_update","step_update":{"step_index":3,"state":"ACTIVE","step_type":"agent_response","text_delta":"Hi "}}',
      '{"event":"step_update","step_update":{"step_index":3,"state":"ACTIVE","step_type":"agent_response","text_delta":"there"}}',
      '{"event":"step_update","step_update":{"step_index":3,"state":"DONE","step_type":"agent_response","text_delta":"Hi there"}}',
    ]);
    expect(meaningful(events)).toEqual([
      { type: "text-delta", messageId: "local-message-1", delta: "Hi " },
      { type: "text-delta", messageId: "local-message-1", delta: "there" },
      { type: "message-completed", messageId: "local-message-1", text: "Hi there" },
    ]);
  });

  it("fails with PROVIDER_FAILED and the response text on an unsuccessful result", () => {
    const { summary } = replay(fixtureLines("failed-result.jsonl"));
    expect(summary.result).toEqual({ ok: false, status: "FAILED", message: "failed" });
    const outcome = antigravityTurnOutcome(run(), summary);
    expect(outcome).toMatchObject({ ok: false, error: { code: "PROVIDER_FAILED", message: "failed", details: { status: "FAILED" } } });
  });

  it("maps a signed-out run (stderr, no stream) to PROVIDER_NOT_AUTHENTICATED with the command that fixes it", () => {
    const { events, summary } = replay([]);
    expect(events).toEqual([]);
    const outcome = antigravityTurnOutcome(run({ exitCode: 1, stderr: fixture("not-logged-in.stderr") }), summary);
    expect(outcome).toMatchObject({
      ok: false,
      error: {
        code: "PROVIDER_NOT_AUTHENTICATED",
        message: 'agy is not signed in (authentication required); run "agy" in a terminal once to sign in',
      },
    });
  });

  it("treats a stream cut off before its result as a crash: PROVIDER_FAILED on a non-zero exit, invalid output on exit 0", () => {
    const { events, summary } = replay(fixtureLines("crash.jsonl"));
    expect(meaningful(events)).toEqual([
      { type: "provider-session-started", providerSessionId: "conv_123" },
      { type: "text-delta", messageId: "local-message-1", delta: "hel" },
      { type: "message-completed", messageId: "local-message-1", text: "hel" },
    ]);
    expect(summary.result).toBeNull();
    expect(antigravityTurnOutcome(run({ exitCode: 2, stderr: "panic: runtime error\n" }), summary)).toMatchObject({
      ok: false,
      error: { code: "PROVIDER_FAILED", message: "panic: runtime error", details: { exitCode: 2 } },
    });
    expect(antigravityTurnOutcome(run(), summary)).toMatchObject({
      ok: false,
      error: { code: "PROVIDER_OUTPUT_INVALID", message: "agy ended without a result" },
    });
  });

  it("counts garbage, ignores unknown events, and rejects a known event without its fields", () => {
    const lines = fixtureLines("garbage.jsonl");
    const { events, summary } = replay(lines);
    expect(events).toEqual(lines.map(() => ({ type: "output-seen" })));
    expect(summary).toMatchObject({
      ignoredLineCount: 3,
      ignoredLineSamples: ["Fetching available models...", "{not json at all", "<html>502 Bad Gateway</html>"],
      unknownEventCount: 1,
      invalidLineCount: 1,
      problem: { lineType: "init", issues: "conversation_id: Invalid input: expected string, received undefined" },
    });
    expect(antigravityTurnOutcome(run(), summary)).toMatchObject({
      ok: false,
      error: { code: "PROVIDER_OUTPUT_INVALID", message: expect.stringContaining('agy printed a "init" event') },
    });
  });

  it("marks a resume of an unknown conversation as lost, so Core can start a fresh one", () => {
    const { summary } = replay([]);
    const outcome = antigravityTurnOutcome(run({ exitCode: 1, stderr: 'Error: conversation "conv_404" not found\n' }), summary);
    expect(outcome).toMatchObject({ ok: false, conversationLost: true, error: { code: "PROVIDER_FAILED" } });
  });

  it("counts a dropped line as output", () => {
    const parser = new AntigravityStreamParser();
    expect(parser.lineDropped()).toEqual([{ type: "output-seen" }]);
    expect(parser.summary().droppedLineCount).toBe(1);
  });
});
