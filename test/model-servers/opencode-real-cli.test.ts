import { existsSync } from "node:fs";
import { readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { realCliVersion } from "../real-clis/real-clis.js";
import { startChatCompletionsServer } from "./chat-completions-server.js";
import type { PrintedEvent } from "./real-cli-process.js";
import { prepareRealCliRun } from "./real-cli-run.js";

// Each opencode run costs about 8 s of CPU: two runs only.
const RUN = ["run", "--format", "json"];

const partOf = (event: PrintedEvent) =>
  event.part as { tool?: string; text?: string; reason?: string; tokens?: Record<string, unknown>; state?: { status?: string; output?: string } };

/** Test-only: the provider gives up on an answer whose headers have not come after `ms` (and then retries). */
async function limitHeaderWait(home: string, ms: number): Promise<void> {
  const file = join(home, ".config", "opencode", "opencode.json");
  const config = JSON.parse(await readFile(file, "utf8")) as { provider: { standin: { options: Record<string, unknown> } } };
  config.provider.standin.options.headerTimeout = ms;
  await writeFile(file, JSON.stringify(config, null, 2));
}

describe(`real opencode ${realCliVersion("opencode")} against the Chat Completions server`, () => {
  it("names the session without the script, runs a scripted bash command, then prints the answer and its tokens", { timeout: 150_000 }, async () => {
    const run = await prepareRealCliRun("opencode", startChatCompletionsServer);
    const answer = ["The command ", "printed ", "42-from-shell."];
    run.server.script(
      { kind: "shell", command: "echo $((6 * 7))-from-shell" },
      { kind: "text", deltas: answer, usage: { inputTokens: 321, outputTokens: 45, cachedInputTokens: 20 } },
    );
    const prompt = "Please compute six times seven in the shell.";
    const opencode = run.start([...RUN, "--variant", "high"], { stdin: prompt });
    expect(await opencode.waitForExit(120_000)).toEqual({ code: 0, signal: null });

    expect(run.server.requests.map((request) => request.purpose)).toEqual(["title", "turn", "turn"]);
    const [first, second] = await run.server.waitForRequests(2, 1000);
    expect(first).toMatchObject({ model: "standin-model", effort: "high", userText: prompt, toolResults: [] });
    expect(first!.toolNames).toContain("bash");
    expect(first!.headers.authorization).toBe("Bearer test-key");
    expect(second).toMatchObject({ userText: prompt, toolResults: ["42-from-shell\n"] });
    const tool = opencode.events.map(partOf).find((part) => part.tool === "bash");
    expect(tool?.state).toMatchObject({ status: "completed", output: "42-from-shell\n" });
    // `run --format json` prints no deltas: the answer arrives as one text part.
    expect(opencode.events.filter((event) => event.type === "text").map((event) => partOf(event).text)).toEqual([answer.join("")]);
    const finish = opencode.events.filter((event) => event.type === "step_finish").map(partOf);
    expect(finish.map((part) => part.reason)).toEqual(["tool-calls", "stop"]);
    // OpenCode counts cached tokens apart from the input: prompt_tokens 321 with 20 cached is input 301, cache.read 20.
    expect(finish[1]!.tokens).toMatchObject({ input: 301, output: 45, cache: { read: 20, write: 0 } });
    // The seeded config folder kept it offline: no npm cache, no background install in its log.
    expect(existsSync(join(run.environment.home, ".npm"))).toBe(false);
    const logs = await readdir(join(run.environment.stateDir, "log"));
    const log = (await Promise.all(logs.map((name) => readFile(join(run.environment.stateDir, "log", name), "utf8")))).join("");
    expect(log).toContain("providerID=standin");
    expect(log).not.toMatch(/dependency install|Npm\./);
  });

  it("gives up on a hung request after its header timeout, retries, and reports the 401 that follows", { timeout: 150_000 }, async () => {
    const run = await prepareRealCliRun("opencode", startChatCompletionsServer);
    await limitHeaderWait(run.environment.home, 1000);
    run.server.script({ kind: "hang" }, { kind: "error", status: 401 });
    const opencode = run.start(RUN, { stdin: "hello" });
    const error = await opencode.waitForEvent((event) => event.type === "error", 120_000);
    expect(error.error).toMatchObject({ name: "APIError", data: { message: "invalid API key (scripted)", statusCode: 401, isRetryable: false } });
    const [hung, retried] = await run.server.waitForRequests(2, 1000);
    expect(retried!.receivedAt - hung!.receivedAt).toBeGreaterThan(1000);
    expect(opencode.events.filter((event) => event.type === "error")).toHaveLength(1);
    expect((await opencode.waitForExit(10_000)).code).toBe(1);
  });
});
