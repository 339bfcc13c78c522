import { describe, expect, it } from "vitest";
import { realCliVersion } from "../real-clis/real-clis.js";
import { startOpenAiResponsesServer } from "./openai-responses-server.js";
import type { PrintedEvent } from "./real-cli-process.js";
import { prepareRealCliRun } from "./real-cli-run.js";

const EXEC = ["exec", "--json", "--skip-git-repo-check", "-s", "workspace-write"];

const itemOf = (event: PrintedEvent) => event.item as { type?: string; text?: string; aggregated_output?: string; exit_code?: number } | undefined;

describe(`real codex ${realCliVersion("codex")} against the OpenAI Responses server`, () => {
  it("runs a scripted exec_command, returns its output, then prints the final answer and the turn's usage", { timeout: 90_000 }, async () => {
    const run = await prepareRealCliRun("codex", startOpenAiResponsesServer);
    const answer = ["The command ", "printed ", "42-from-shell."];
    run.server.script(
      { kind: "shell", command: "echo $((6 * 7))-from-shell" },
      { kind: "text", deltas: answer, usage: { inputTokens: 321, outputTokens: 45, cachedInputTokens: 20 } },
    );
    const prompt = "Please compute six times seven in the shell.";
    const codex = run.start([...EXEC, "-m", "gpt-5.5", "-c", 'model_reasoning_effort="low"', "-"], { stdin: prompt });
    expect(await codex.waitForExit(60_000)).toEqual({ code: 0, signal: null });

    const [first, second] = await run.server.waitForRequests(2, 1000);
    expect(first).toMatchObject({ model: "gpt-5.5", effort: "low", userText: prompt, toolResults: [] });
    expect(first!.toolNames).toContain("exec_command");
    expect(first!.headers.authorization).toBe("Bearer test-key");
    // Codex wraps the output ("Chunk ID: …\nOutput:\n42-from-shell\n"); the CLI really ran the command.
    expect(second!.userText).toBe(prompt);
    expect(second!.toolResults).toHaveLength(1);
    expect(second!.toolResults[0]).toMatch(/Process exited with code 0\n[\s\S]*Output:\n42-from-shell\n$/);
    const items = codex.events.flatMap((event) => (event.type === "item.completed" ? [itemOf(event)!] : []));
    expect(items.find((item) => item.type === "command_execution")).toMatchObject({ aggregated_output: "42-from-shell\n", exit_code: 0 });
    // codex exec --json prints no deltas: the answer arrives as one agent_message.
    expect(items.find((item) => item.type === "agent_message")?.text).toBe(answer.join(""));
    const completed = codex.events.find((event) => event.type === "turn.completed")!;
    expect(completed.usage).toMatchObject({ input_tokens: 100 + 321, cached_input_tokens: 20, output_tokens: 10 + 45 });
  });

  it("prints nothing after turn.started for a request the server never answers, and does not exit", { timeout: 90_000 }, async () => {
    const run = await prepareRealCliRun("codex", startOpenAiResponsesServer);
    run.server.script({ kind: "hang" });
    const codex = run.start([...EXEC, "-"], { stdin: "hello" });
    await run.server.waitForRequests(1, 60_000);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(codex.events.map((event) => event.type)).toEqual(["thread.started", "turn.started"]);
    await expect(codex.waitForExit(100)).rejects.toThrow("waited 100 ms for the exit");
    expect(run.server.requests).toHaveLength(1);
  });

  it("fails the turn on a 401 after the one retry its config allows", { timeout: 90_000 }, async () => {
    const run = await prepareRealCliRun("codex", startOpenAiResponsesServer);
    run.server.script({ kind: "error", status: 401 }, { kind: "error", status: 401 });
    const codex = run.start([...EXEC, "-"], { stdin: "hello" });
    const failed = await codex.waitForEvent((event) => event.type === "turn.failed", 60_000);
    expect((failed.error as { message: string }).message).toMatch(/^unexpected status 401 Unauthorized: invalid API key \(scripted\)/);
    expect(codex.events.filter((event) => event.type === "error").map((event) => event.message)).toEqual([
      expect.stringMatching(/^Reconnecting\.\.\. 1\/1 \(unexpected status 401/),
      expect.stringMatching(/^unexpected status 401/),
    ]);
    expect((await codex.waitForExit(5000)).code).toBe(1);
    expect(run.server.requests).toHaveLength(2);
  });
});
