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
  return summaryOf(
    readFileSync(new URL(`./fixtures/${name}`, import.meta.url), "utf8")
      .split("\n")
      .filter((line) => line !== ""),
  );
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
    const lines = ['{"type":"error","timestamp":1,"sessionID":"ses_x","error":{"name":"UnknownError","data":{"message":"something broke"}}}'];
    const outcome = opencodeTurnOutcome(exited(1), summaryOf(lines), false);
    expect(outcome).toMatchObject({
      ok: false,
      error: { code: "PROVIDER_FAILED", message: "something broke", details: { exitCode: 1, errorName: "UnknownError" } },
    });
    expect(outcome).not.toHaveProperty("conversationLost");
  });

  it("maps a missing or refused key to PROVIDER_NOT_AUTHENTICATED with the command that fixes it", () => {
    for (const name of ["not-authenticated.jsonl", "invalid-key.jsonl", "refused-key.jsonl"]) {
      const outcome = opencodeTurnOutcome(exited(1), fixture(name), false);
      expect(outcome).toMatchObject({
        ok: false,
        error: { code: "PROVIDER_NOT_AUTHENTICATED", message: expect.stringContaining('"opencode auth login"') as string },
      });
    }
    // A key the provider refused (401) says so, and that the key may be what needs fixing.
    expect(opencodeTurnOutcome(exited(1), fixture("refused-key.jsonl"), false)).toMatchObject({
      ok: false,
      error: {
        message: `opencode's model provider refused its credentials (stand-in says 401); run "opencode auth login" in a terminal, or fix the provider's API key in opencode's config`,
        details: { provider: "opencode", httpStatus: 401, errorName: "APIError" },
      },
    });
  });

  it("maps a busy or rate-limited provider to PROVIDER_OVERLOADED, retriable", () => {
    // Recorded: opencode 1.18.33 against a stand-in answering 429, after its own retries.
    const rateLimited = opencodeTurnOutcome(exited(1), fixture("rate-limited.jsonl"), false);
    expect(rateLimited).toMatchObject({
      ok: false,
      error: { code: "PROVIDER_OVERLOADED", message: "stand-in says 429", details: { provider: "opencode", httpStatus: 429, retriable: true } },
    });
    expect(JSON.stringify(rateLimited.ok ? null : rateLimited.error.toWire())).not.toContain("127.0.0.1");
    expect(opencodeTurnOutcome(exited(1), fixture("api-error.jsonl"), false)).toMatchObject({
      ok: false,
      error: { code: "PROVIDER_OVERLOADED", message: "Overloaded", details: { provider: "opencode", httpStatus: 529, retriable: true, exitCode: 1 } },
    });
    const error = (data: object) => [JSON.stringify({ type: "error", timestamp: 1, sessionID: "ses_x", error: { name: "APIError", data } })];
    for (const data of [
      { message: "Too Many Requests", statusCode: 429, isRetryable: true },
      { message: "bad gateway", statusCode: 502 },
      { message: "odd", statusCode: 418, isRetryable: true },
    ]) {
      expect(opencodeTurnOutcome(exited(1), summaryOf(error(data)), false), JSON.stringify(data)).toMatchObject({
        ok: false,
        error: { code: "PROVIDER_OVERLOADED" },
      });
    }
    // Retried without any answer (no server): not a sign of load, and the message carries no endpoint.
    const unreachable = error({
      message: "Cannot connect to API: Unable to connect. Is the computer able to access the url?",
      isRetryable: true,
      metadata: { url: "http://127.0.0.1:9/v1/chat/completions" },
    });
    const outcome = opencodeTurnOutcome(exited(1, "Error: fetch http://127.0.0.1:9/v1/chat/completions failed\n"), summaryOf(unreachable), false);
    expect(outcome).toMatchObject({ ok: false, error: { code: "PROVIDER_FAILED" } });
    expect(JSON.stringify(outcome.ok ? null : outcome.error.toWire())).not.toContain("127.0.0.1");
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
