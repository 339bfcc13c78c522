import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { ProviderProcessResult } from "../provider-process.js";
import { codexTurnOutcome } from "./codex-adapter.js";
import { CodexStreamParser } from "./codex-stream-parser.js";

/** The summary of a fixture (or of given lines) replayed through the parser. */
function summaryOf(source: string | readonly string[]) {
  const lines = typeof source === "string" ? readFileSync(new URL(`./fixtures/${source}`, import.meta.url), "utf8").split("\n") : source;
  const parser = new CodexStreamParser({ idPrefix: "run" });
  for (const line of lines) if (line !== "") parser.feed(line);
  parser.finish();
  return parser.summary();
}

function exited(exitCode: number | null, stderr = ""): ProviderProcessResult {
  return { exitCode, signal: exitCode === null ? "SIGKILL" : null, stderr, stderrTruncated: false, spawnError: null, droppedLineCount: 0 };
}

describe("codexTurnOutcome", () => {
  it("is ok for a completed turn, also after error events codex recovered from", () => {
    expect(codexTurnOutcome(exited(0), summaryOf("plain-answer.jsonl"))).toEqual({ ok: true });
    expect(codexTurnOutcome(exited(0), summaryOf("recovered-error.jsonl"))).toEqual({ ok: true });
  });

  it("maps a refused key to PROVIDER_NOT_AUTHENTICATED that says to sign in or fix the key, without the endpoint", () => {
    const outcome = codexTurnOutcome(exited(1), summaryOf("not-logged-in.jsonl"));
    expect(outcome).toMatchObject({ ok: false, error: { code: "PROVIDER_NOT_AUTHENTICATED", details: { provider: "codex", httpStatus: 401 } } });
    expect(outcome.ok ? "" : outcome.error.message).toBe(
      `codex's model service refused its credentials (unexpected status 401 Unauthorized: Missing bearer or basic authentication in header, url: <endpoint>); run "codex login" in a terminal, or fix the API key of its model provider`,
    );
    // The recorded run against a stand-in (codex 0.169.0) ends the same way.
    expect(codexTurnOutcome(exited(1), summaryOf("refused-key.jsonl"))).toMatchObject({ ok: false, error: { code: "PROVIDER_NOT_AUTHENTICATED" } });
  });

  it("keeps the sign-in wording for a codex that is signed out", () => {
    const signedOut = ['{"type":"thread.started","thread_id":"t-1"}', '{"type":"turn.failed","error":{"message":"Not logged in"}}'];
    expect(codexTurnOutcome(exited(1), summaryOf(signedOut))).toMatchObject({
      ok: false,
      error: { code: "PROVIDER_NOT_AUTHENTICATED", message: `codex is not signed in (Not logged in); run "codex login" in a terminal` },
    });
  });

  it("maps a service that is overloaded or rate-limited to PROVIDER_OVERLOADED, retriable (recorded runs)", () => {
    expect(codexTurnOutcome(exited(1), summaryOf("rate-limited.jsonl"))).toMatchObject({
      ok: false,
      error: {
        code: "PROVIDER_OVERLOADED",
        message: "exceeded retry limit, last status: 429 Too Many Requests",
        details: { provider: "codex", httpStatus: 429, retriable: true },
      },
    });
    expect(codexTurnOutcome(exited(1), summaryOf("high-demand.jsonl"))).toMatchObject({
      ok: false,
      error: {
        code: "PROVIDER_OVERLOADED",
        message: "We’re currently experiencing high demand, which may cause temporary errors.",
        details: { retriable: true },
      },
    });
  });

  it("maps a 5xx named in a failed turn to PROVIDER_OVERLOADED, also when the stream ends on the error", () => {
    const turnFailed = [
      '{"type":"turn.failed","error":{"message":"unexpected status 503 Service Unavailable: busy, url: http://127.0.0.1:9/v1/responses"}}',
    ];
    expect(codexTurnOutcome(exited(1), summaryOf(turnFailed))).toMatchObject({
      ok: false,
      error: {
        code: "PROVIDER_OVERLOADED",
        message: "unexpected status 503 Service Unavailable: busy, url: <endpoint>",
        details: { httpStatus: 503, retriable: true },
      },
    });
    const lastError = ['{"type":"error","message":"exceeded retry limit, last status: 500 Internal Server Error"}'];
    expect(codexTurnOutcome(exited(0), summaryOf(lastError))).toMatchObject({
      ok: false,
      error: { code: "PROVIDER_OVERLOADED", details: { httpStatus: 500 } },
    });
  });

  it("scrubs the endpoint out of a failure's message and details", () => {
    const outcome = codexTurnOutcome(
      exited(1, "ERROR codex_api: POST http://127.0.0.1:9/v1/responses failed\n"),
      summaryOf("connection-refused.jsonl"),
    );
    expect(outcome).toMatchObject({ ok: false, error: { code: "PROVIDER_FAILED" } });
    expect(JSON.stringify(outcome.ok ? null : outcome.error.toWire())).not.toContain("127.0.0.1");
  });

  it("also recognises a 401 that only reached stderr", () => {
    const stderr =
      "Reading prompt from stdin...\n2026-08-29T11:38:32Z ERROR codex_api: failed to connect to websocket: HTTP error: 401 Unauthorized, url: wss://api.openai.com/v1/responses\n";
    const outcome = codexTurnOutcome(exited(1), summaryOf("crash.jsonl"));
    expect(outcome).toMatchObject({ ok: false, error: { code: "PROVIDER_FAILED" } });
    expect(codexTurnOutcome(exited(1, stderr), summaryOf("crash.jsonl"))).toMatchObject({
      ok: false,
      error: { code: "PROVIDER_NOT_AUTHENTICATED", message: expect.stringContaining("HTTP error: 401 Unauthorized") },
    });
  });

  it("fails with the failed turn's message, whatever the exit code", () => {
    const failed = [
      '{"type":"thread.started","thread_id":"t-1"}',
      '{"type":"turn.failed","error":{"message":"model response stream ended unexpectedly"}}',
    ];
    for (const exitCode of [0, 1]) {
      expect(codexTurnOutcome(exited(exitCode, "Reading prompt from stdin...\n"), summaryOf(failed))).toMatchObject({
        ok: false,
        error: { code: "PROVIDER_FAILED", message: "model response stream ended unexpectedly" },
      });
    }
  });

  it("fails with the last error event when the stream ends on it without a turn end", () => {
    const lines = ['{"type":"thread.started","thread_id":"t-1"}', '{"type":"error","message":"stream error: broken pipe"}'];
    expect(codexTurnOutcome(exited(0), summaryOf(lines))).toMatchObject({
      ok: false,
      error: { code: "PROVIDER_FAILED", message: "stream error: broken pipe" },
    });
  });

  it("maps a crash to PROVIDER_FAILED and a silent end to PROVIDER_OUTPUT_INVALID", () => {
    expect(codexTurnOutcome(exited(null), summaryOf("crash.jsonl"))).toMatchObject({
      ok: false,
      error: { code: "PROVIDER_FAILED", message: "codex was killed by SIGKILL" },
    });
    expect(codexTurnOutcome(exited(0), summaryOf("crash.jsonl"))).toMatchObject({
      ok: false,
      error: { code: "PROVIDER_OUTPUT_INVALID", message: "codex ended without turn.completed or turn.failed" },
    });
  });

  it("refuses malformed known lines with PROVIDER_OUTPUT_INVALID, even when the turn completed", () => {
    expect(codexTurnOutcome(exited(0), summaryOf("garbage.jsonl"))).toMatchObject({
      ok: false,
      error: {
        code: "PROVIDER_OUTPUT_INVALID",
        message: expect.stringMatching(/^codex printed a "thread.started" line/),
        details: { invalidLineCount: 2 },
      },
    });
  });

  it("flags a lost thread only on codex's no-rollout answer, without the stdin notice in the message", () => {
    const stderr = "Reading prompt from stdin...\nError: thread/resume: thread/resume failed: no rollout found for thread id t-9 (code -32600)\n";
    expect(codexTurnOutcome(exited(1, stderr), summaryOf([]))).toMatchObject({
      ok: false,
      conversationLost: true,
      error: { code: "PROVIDER_FAILED", message: "Error: thread/resume: thread/resume failed: no rollout found for thread id t-9 (code -32600)" },
    });
    expect(codexTurnOutcome(exited(1, "Error: something else\n"), summaryOf([]))).not.toHaveProperty("conversationLost");
  });
});
