import { describe, expect, it } from "vitest";
import { realCliVersion } from "../real-clis/real-clis.js";
import { startAnthropicMessagesServer } from "./anthropic-messages-server.js";
import { prepareRealCliRun } from "./real-cli-run.js";
import type { PrintedEvent } from "./real-cli-process.js";

const STREAM_JSON = ["-p", "--output-format", "stream-json", "--verbose", "--include-partial-messages"];
/** Test-only: one attempt per request, so an error or a timeout ends the run at once instead of after ten retries. */
const NO_RETRIES = { CLAUDE_CODE_MAX_RETRIES: "0" };

const isResult = (event: PrintedEvent) => event.type === "result";
const textDeltas = (events: readonly PrintedEvent[]) =>
  events.flatMap((event) => {
    const inner = event.event as { type?: string; delta?: { type?: string; text?: string } } | undefined;
    return event.type === "stream_event" && inner?.type === "content_block_delta" && inner.delta?.type === "text_delta" ? [inner.delta.text] : [];
  });

describe(`real claude ${realCliVersion("claude")} against the Anthropic Messages server`, () => {
  it("runs a scripted Bash command, returns its output, then streams the final answer in deltas with usage", { timeout: 90_000 }, async () => {
    const run = await prepareRealCliRun("claude", startAnthropicMessagesServer);
    const answer = ["The command ", "printed ", "42-from-bash."];
    run.server.script(
      { kind: "shell", command: "echo $((6 * 7))-from-bash" },
      { kind: "text", deltas: answer, usage: { inputTokens: 321, outputTokens: 45, cachedInputTokens: 20 } },
    );
    const prompt = "Please compute six times seven in the shell.";
    const claude = run.start([...STREAM_JSON, "--allowedTools", "Bash", "--model", "claude-scripted-1", "--effort", "high"], { stdin: prompt });
    expect(await claude.waitForExit(60_000)).toEqual({ code: 0, signal: null });

    const [first, second] = await run.server.waitForRequests(2, 1000);
    expect(first).toMatchObject({ model: "claude-scripted-1", effort: "high", userText: prompt, toolResults: [] });
    expect(first!.toolNames).toContain("Bash");
    expect(first!.headers["x-api-key"]).toBe("test-key");
    // The CLI really ran the command: the output is not in the command line.
    expect(second).toMatchObject({ userText: prompt, toolResults: ["42-from-bash"] });
    expect(textDeltas(claude.events)).toEqual(answer);
    const result = claude.events.find(isResult)!;
    expect(result).toMatchObject({ subtype: "success", is_error: false, result: answer.join(""), num_turns: 2 });
    expect(result.usage).toMatchObject({ input_tokens: 100 + 321, output_tokens: 10 + 45, cache_read_input_tokens: 20 });
  });

  it("reports a request the server never answers as a timeout", { timeout: 90_000 }, async () => {
    const run = await prepareRealCliRun("claude", startAnthropicMessagesServer);
    run.server.script({ kind: "hang" });
    const claude = run.start(STREAM_JSON, { stdin: "hello", extraEnv: { ...NO_RETRIES, API_TIMEOUT_MS: "1500" } });
    const result = await claude.waitForEvent(isResult, 60_000);
    expect(result).toMatchObject({ is_error: true, terminal_reason: "api_error" });
    expect(String(result.result)).toContain("Request timed out");
    expect(run.server.requests).toHaveLength(1);
    expect((await claude.waitForExit(5000)).code).toBe(1);
  });

  it("reports a 401 as an invalid API key", { timeout: 90_000 }, async () => {
    const run = await prepareRealCliRun("claude", startAnthropicMessagesServer);
    run.server.script({ kind: "error", status: 401 });
    const claude = run.start(STREAM_JSON, { stdin: "hello", extraEnv: NO_RETRIES });
    const result = await claude.waitForEvent(isResult, 60_000);
    expect(result).toMatchObject({ is_error: true, result: "Invalid API key · Fix external API key", terminal_reason: "api_error" });
    expect((await claude.waitForExit(5000)).code).toBe(1);
  });
});
