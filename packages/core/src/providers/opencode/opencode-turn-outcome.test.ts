import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { ProviderProcessResult } from "../provider-process.js";
import { opencodeTurnOutcome } from "./opencode-adapter.js";
import { OpencodeStreamParser } from "./opencode-stream-parser.js";

function summaryOf(lines: readonly string[]) {
  const parser = new OpencodeStreamParser();
  for (const line of lines) parser.feed(line);
  parser.finish();
  return parser.summary();
}

function fixture(name: string) {
  return summaryOf(readFileSync(new URL(`./fixtures/${name}`, import.meta.url), "utf8").split("\n").filter((line) => line !== ""));
}

function exited(exitCode: number, stderr = ""): ProviderProcessResult {
  return { exitCode, signal: null, stderr, stderrTruncated: false, spawnError: null, droppedLineCount: 0 };
}

describe("opencodeTurnOutcome", () => {
  it("accepts a finished turn, with or without the done line", () => {
    expect(opencodeTurnOutcome(exited(0), fixture("plain-answer.jsonl"), false)).toEqual({ ok: true });
    expect(opencodeTurnOutcome(exited(0), fixture("resumed-turn-without-done.jsonl"), true)).toEqual({ ok: true });
  });

  it("maps an error line with exit 1 to PROVIDER_FAILED with the provider's message", () => {
    const outcome = opencodeTurnOutcome(exited(1), fixture("api-error.jsonl"), false);
    expect(outcome).toMatchObject({ ok: false, error: { code: "PROVIDER_FAILED", message: "Overloaded", details: { exitCode: 1, errorName: "APIError" } } });
    expect(outcome).not.toHaveProperty("conversationLost");
  });

  it("maps a missing or refused key to PROVIDER_NOT_AUTHENTICATED with the command that fixes it", () => {
    for (const name of ["not-authenticated.jsonl", "invalid-key.jsonl"]) {
      const outcome = opencodeTurnOutcome(exited(1), fixture(name), false);
      expect(outcome).toMatchObject({ ok: false, error: { code: "PROVIDER_NOT_AUTHENTICATED", message: expect.stringContaining('"opencode auth login"') as string } });
    }
  });

  it("strips OpenCode's colours from stderr and marks a resumed session it cannot find as lost", () => {
    const outcome = opencodeTurnOutcome(exited(1, "\x1b[91m\x1b[1mError: \x1b[0mSession not found\n"), summaryOf([]), true);
    expect(outcome).toMatchObject({ ok: false, conversationLost: true, error: { code: "PROVIDER_FAILED", message: "Error: Session not found" } });
    // The same text on a first turn is only a failure.
    expect(opencodeTurnOutcome(exited(1, "Error: Session not found\n"), summaryOf([]), false)).not.toHaveProperty("conversationLost");
  });

  it("refuses a turn that stopped while the model meant to go on, and a malformed known line", () => {
    const stopped = summaryOf([
      '{"type":"step_start","timestamp":1,"sessionID":"ses_x","part":{"id":"prt_1","type":"step-start"}}',
      '{"type":"step_finish","timestamp":2,"sessionID":"ses_x","part":{"id":"prt_2","type":"step-finish","reason":"tool-calls"}}',
    ]);
    expect(opencodeTurnOutcome(exited(0), stopped, false)).toMatchObject({
      ok: false,
      error: { code: "PROVIDER_OUTPUT_INVALID", message: "opencode ended without finishing the turn" },
    });
    const malformed = summaryOf(['{"type":"done","timestamp":1,"sessionID":"ses_x"}']);
    expect(opencodeTurnOutcome(exited(0), malformed, false)).toMatchObject({
      ok: false,
      error: { code: "PROVIDER_OUTPUT_INVALID", message: expect.stringContaining('"done" line') as string },
    });
  });
});
