import { describe, expect, it } from "vitest";
import {
  activitiesOf,
  announcedSessions,
  completedTexts,
  firstLineField,
  replayRecorded,
} from "../../../../../test/fixture-recorder/recorded-replay.js";
import {
  PLAIN_ANSWER_DELTAS,
  RESUMED_DELTAS,
  RETRY_ANSWER_DELTAS,
  SHELL_COMMAND,
  SHELL_FINAL_DELTAS,
  TOOL_RESULT_PREFIX,
} from "../../../../../test/fixture-recorder/recording-scenarios.js";
import { claudeTurnOutcome } from "./claude-adapter.js";
import { ClaudeStreamParser } from "./claude-stream-parser.js";

// Real output of the pinned claude, written by `npm run record-fixtures`; recorded/README.md says how each file was
// made and how the run exited.
const recorded = new URL("./fixtures/recorded/", import.meta.url);
const replay = (file: string) => replayRecorded(recorded, file, new ClaudeStreamParser({ messageIdPrefix: "replay" }), claudeTurnOutcome);

describe("claude's recorded real output, replayed through ClaudeStreamParser and claudeTurnOutcome", () => {
  it("plain-answer: the text the model server sent, the session of the init line, no parser problem", () => {
    const { events, summary, outcome, lines } = replay("plain-answer.jsonl");
    expect(completedTexts(events)).toEqual([PLAIN_ANSWER_DELTAS.join("")]);
    const deltas = events.flatMap((event) => (event.type === "text-delta" ? [event.delta] : []));
    expect(deltas.join("")).toBe(PLAIN_ANSWER_DELTAS.join(""));
    expect(deltas.length).toBeGreaterThan(1);
    expect(announcedSessions(events)[0]).toBe(firstLineField({ lines }, "session_id"));
    expect(summary.problem).toBeNull();
    expect(outcome).toEqual({ ok: true });
  });

  it("shell-command: a command activity started and completed for the command, then the final text", () => {
    const { events, summary, outcome } = replay("shell-command.jsonl");
    const commands = activitiesOf(events, "command");
    expect(commands.map((activity) => activity.status)).toEqual(["started", "completed"]);
    for (const activity of commands) expect(activity.title).toContain(SHELL_COMMAND);
    expect(completedTexts(events).at(-1)).toBe(SHELL_FINAL_DELTAS.join(""));
    expect(summary.problem).toBeNull();
    expect(outcome).toEqual({ ok: true });
  });

  it("resumed-turn: the session id of the first run, and the new answer", () => {
    const first = replay("plain-answer.jsonl");
    const { events, summary, outcome } = replay("resumed-turn.jsonl");
    expect(summary.providerSessionId).toBe(first.summary.providerSessionId);
    expect(new Set(announcedSessions(events))).toEqual(new Set([first.summary.providerSessionId]));
    expect(completedTexts(events)).toEqual([RESUMED_DELTAS.join("")]);
    expect(outcome).toEqual({ ok: true });
  });

  it("auth-refused: PROVIDER_NOT_AUTHENTICATED", () => {
    const { outcome } = replay("auth-refused.jsonl");
    expect(outcome).toMatchObject({ ok: false, error: { code: "PROVIDER_NOT_AUTHENTICATED" } });
  });

  it("overloaded-then-answer: an ok turn with the answer of the retry", () => {
    const { events, summary, outcome } = replay("overloaded-then-answer.jsonl");
    expect(outcome).toEqual({ ok: true });
    expect(completedTexts(events).at(-1)).toBe(RETRY_ANSWER_DELTAS.join(""));
    expect(summary.problem).toBeNull();
  });

  it("sandbox-write-outside: the refused command is a failed activity, and the turn ends with the final text", () => {
    const { events, summary, outcome } = replay("sandbox-write-outside.jsonl");
    expect(activitiesOf(events, "command").map((activity) => activity.status)).toEqual(["started", "failed"]);
    expect(completedTexts(events).at(-1)).toMatch(new RegExp(`^${TOOL_RESULT_PREFIX}`));
    expect(summary.problem).toBeNull();
    expect(outcome).toEqual({ ok: true });
  });
});
