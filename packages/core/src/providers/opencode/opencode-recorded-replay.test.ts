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
import { opencodeTurnOutcome } from "./opencode-adapter.js";
import { OpencodeStreamParser } from "./opencode-stream-parser.js";

// Real output of the pinned opencode, written by `npm run record-fixtures`; recorded/README.md says how each file was
// made and how the run exited.
const recorded = new URL("./fixtures/recorded/", import.meta.url);
const replay = (file: string, resuming = false) =>
  replayRecorded(recorded, file, new OpencodeStreamParser(), (run, summary) => opencodeTurnOutcome(run, summary, resuming));

describe("opencode's recorded real output, replayed through OpencodeStreamParser and opencodeTurnOutcome", () => {
  it("plain-answer: the text the model server sent (whole: opencode prints no deltas), the session of the first line, no parser problem", () => {
    const { events, summary, outcome, lines } = replay("plain-answer.jsonl");
    expect(completedTexts(events)).toEqual([PLAIN_ANSWER_DELTAS.join("")]);
    expect(announcedSessions(events)[0]).toBe(firstLineField({ lines }, "sessionID"));
    expect(summary.problem).toBeNull();
    expect(outcome).toEqual({ ok: true });
  });

  // A sandbox session's OPENCODE_PERMISSION denies every shell command but Pedelec's own (opencode-args.ts), so the
  // command runs only in the Full Access recording.
  it("shell-command: in a sandbox session the command is denied (a failed activity), and the turn goes on to the final text", () => {
    const { events, summary, outcome } = replay("shell-command.jsonl");
    const commands = activitiesOf(events, "command");
    expect(commands.map((activity) => activity.status)).toEqual(["started", "failed"]);
    for (const activity of commands) expect(activity.title).toContain(SHELL_COMMAND);
    expect(completedTexts(events).at(-1)).toBe(SHELL_FINAL_DELTAS.join(""));
    expect(summary.problem).toBeNull();
    expect(outcome).toEqual({ ok: true });
  });

  it("shell-command-full-access: a command activity started and completed for the command, then the final text", () => {
    const { events, summary, outcome } = replay("shell-command-full-access.jsonl");
    const commands = activitiesOf(events, "command");
    expect(commands.map((activity) => activity.status)).toEqual(["started", "completed"]);
    for (const activity of commands) expect(activity.title).toContain(SHELL_COMMAND);
    expect(completedTexts(events).at(-1)).toBe(SHELL_FINAL_DELTAS.join(""));
    expect(summary.problem).toBeNull();
    expect(outcome).toEqual({ ok: true });
  });

  it("resumed-turn: the session id of the first run, and the new answer", () => {
    const first = replay("plain-answer.jsonl");
    const { events, summary, outcome } = replay("resumed-turn.jsonl", true);
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
