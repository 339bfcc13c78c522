import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { ProviderProcessResult } from "../provider-process.js";
import { claudeTurnOutcome } from "./claude-adapter.js";
import { ClaudeStreamParser } from "./claude-stream-parser.js";

/** The summary of a fixture (or of given lines) replayed through the parser. */
function summaryOf(source: string | readonly string[]) {
  const lines = typeof source === "string" ? readFileSync(new URL(`./fixtures/${source}`, import.meta.url), "utf8").split("\n") : source;
  const parser = new ClaudeStreamParser({ messageIdPrefix: "local" });
  for (const line of lines) if (line !== "") parser.feed(line);
  parser.finish();
  return parser.summary();
}

function exited(exitCode: number | null, stderr = ""): ProviderProcessResult {
  return { exitCode, signal: exitCode === null ? "SIGKILL" : null, stderr, stderrTruncated: false, spawnError: null, droppedLineCount: 0 };
}

/** A failed run's result line, as claude 2.1.332 prints it (built from the verbatim shapes in real-clis.md). */
const failedResult = (fields: object) =>
  JSON.stringify({ type: "result", subtype: "success", is_error: true, terminal_reason: "api_error", session_id: "s", ...fields });

describe("claudeTurnOutcome for a failed request to the model's service", () => {
  it("maps a refused key to PROVIDER_NOT_AUTHENTICATED that says to sign in or fix the key (recorded run)", () => {
    const outcome = claudeTurnOutcome(exited(1), summaryOf("refused-key-retry.jsonl"));
    expect(outcome).toMatchObject({
      ok: false,
      error: {
        code: "PROVIDER_NOT_AUTHENTICATED",
        message: `claude's model service refused its credentials (Failed to authenticate. API Error: 401 stand-in says 401); run "claude auth login" in a terminal, or fix the API key or token claude is given`,
        details: { provider: "claude", httpStatus: 401 },
      },
    });
  });

  it("maps claude's final 401 result to PROVIDER_NOT_AUTHENTICATED", () => {
    const summary = summaryOf([failedResult({ api_error_status: 401, result: "Invalid API key · Fix external API key" })]);
    const outcome = claudeTurnOutcome(exited(1), summary);
    expect(outcome).toMatchObject({
      ok: false,
      error: { code: "PROVIDER_NOT_AUTHENTICATED", details: { httpStatus: 401, providerMessage: "Invalid API key · Fix external API key" } },
    });
    expect(outcome.ok ? "" : outcome.error.message).toContain("fix the API key");
    // A 403 is a refusal too.
    expect(claudeTurnOutcome(exited(1), summaryOf([failedResult({ api_error_status: 403, result: "API Error: 403 forbidden" })]))).toMatchObject({
      ok: false,
      error: { code: "PROVIDER_NOT_AUTHENTICATED" },
    });
  });

  it("keeps the sign-in wording for a CLI that is signed out", () => {
    const outcome = claudeTurnOutcome(exited(1), summaryOf("not-logged-in.jsonl"));
    expect(outcome).toMatchObject({
      ok: false,
      error: {
        code: "PROVIDER_NOT_AUTHENTICATED",
        message: `claude is not signed in (Not logged in · Please run /login); run "claude auth login" in a terminal`,
      },
    });
  });

  it("maps an overloaded or rate-limited service to PROVIDER_OVERLOADED, retriable, without the endpoint (recorded run)", () => {
    const outcome = claudeTurnOutcome(exited(1), summaryOf("overloaded-result.jsonl"));
    expect(outcome).toEqual({
      ok: false,
      error: expect.objectContaining({
        code: "PROVIDER_OVERLOADED",
        message:
          "API Error: 529 stand-in says 529. This is a server-side issue, usually temporary — try again in a moment. If it persists, check your inference gateway (<endpoint>).",
        details: { provider: "claude", httpStatus: 529, subtype: "success", terminalReason: "api_error", retriable: true },
      }),
    });
  });

  it("maps 429 and 5xx results to PROVIDER_OVERLOADED, also when only the text names the status", () => {
    const cases: [object, number][] = [
      [{ api_error_status: 429, result: "API Error: Request rejected (429) · rate limited" }, 429],
      [{ api_error_status: 500, result: "API Error: 500 internal" }, 500],
      [{ result: "API Error: 503 unavailable" }, 503],
      [{ result: "API Error: Request rejected (429) · slow down" }, 429],
    ];
    for (const [fields, status] of cases) {
      expect(claudeTurnOutcome(exited(1), summaryOf([failedResult(fields)])), JSON.stringify(fields)).toMatchObject({
        ok: false,
        error: { code: "PROVIDER_OVERLOADED", details: { httpStatus: status, retriable: true } },
      });
    }
    // The older error_during_execution result of the 529 fixture names the status in its errors text.
    expect(claudeTurnOutcome(exited(1), summaryOf("error-result.jsonl"))).toMatchObject({
      ok: false,
      error: { code: "PROVIDER_OVERLOADED", details: { httpStatus: 529 } },
    });
  });

  it("leaves a refused connection PROVIDER_FAILED (recorded run)", () => {
    expect(claudeTurnOutcome(exited(1), summaryOf("connection-refused.jsonl"))).toMatchObject({
      ok: false,
      error: { code: "PROVIDER_FAILED", message: "API Error: Connection refused — a firewall or proxy may be blocking it (ECONNREFUSED)" },
    });
  });

  it("scrubs endpoints and keys out of every message and detail", () => {
    const stderr = "request to http://user:pw@127.0.0.1:9/v1/messages?key=abc failed\nx-api-key: sk-ant-secret-0123456789\n";
    const outcome = claudeTurnOutcome(exited(2, stderr), summaryOf([]));
    expect(outcome).toMatchObject({ ok: false, error: { code: "PROVIDER_FAILED", message: "request to <endpoint> failed\nx-api-key: <redacted>" } });
    expect(JSON.stringify(outcome.ok ? null : outcome.error.details)).not.toMatch(/127\.0\.0\.1|sk-ant|pw@/);
    const failed = claudeTurnOutcome(
      exited(0),
      summaryOf([failedResult({ subtype: "error_during_execution", terminal_reason: "aborted_tools", result: "lost http://10.0.0.1/" })]),
    );
    expect(failed).toMatchObject({
      ok: false,
      error: { code: "PROVIDER_FAILED", message: "lost <endpoint>", details: { terminalReason: "aborted_tools" } },
    });
  });
});
