// Prints median / p95 of three commands, interleaved in one run: `node -e 0`, `pedelec-cli --help` (the command's own
// start-up and exit) and a whole `pedelec-cli tool-call` against a real Core, whose page answers at once; each with its
// ratio to plain Node. Agents run pedelec-cli for every tool call, so its start-up is paid every time. All three run
// with the same clean environment (PATH, plus what the command needs): variables such as NODE_EXTRA_CA_CERTS make
// Node read files at start-up and would hide the difference being measured.
import { spawn } from "node:child_process";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { expect, it } from "vitest";
import { CoreConnection } from "@pedelec/core-client/core-client";
import { startCore } from "@pedelec/core/core-daemon";
import { addTodoTool } from "@pedelec/core/testing/add-todo-tool";
import { capabilityOfHangingAgent } from "@pedelec/core/testing/agent-capability";
import { createCoreHome } from "@pedelec/core/testing/core-home";
import { repoRoot } from "../test/e2e/harness.js";
import { latencySummary, ms } from "./latency-summary.js";

const RUNS = Number.parseInt(process.env.BENCH_CLI_START_RUNS ?? "60", 10);
const ORIGIN = "http://127.0.0.1:4000";
/** What `pedelec install` points the agent's launcher at. */
const PEDELEC_CLI = join(repoRoot, "packages/cli/dist/agent-commands/pedelec-cli.cjs");

/** Runs node with `args` and `env` only; resolves with the exit code, stdout and the wall time to exit. */
function runNode(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; stdout: string; elapsed: number }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, args, { env, stdio: ["ignore", "pipe", "ignore"] });
    let stdout = "";
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, elapsed: performance.now() - started }));
  });
}

it("measures pedelec-cli start-up against node -e 0", async () => {
  const { home, env: coreEnv } = await createCoreHome({
    prefix: "pedelec-bench-cli-start-",
    providerPath: join(repoRoot, "test/stand-ins/claude"),
    stateFolders: { CLAUDE_CONFIG_DIR: "claude-state" },
  });
  const core = await startCore(coreEnv);
  const page = await CoreConnection.open(core.paths.socketPath);
  // The page answers every tool call at once, so the figure is the command and Core, not a handler.
  page.onFrame((frame) => {
    if (frame.kind !== "event" || frame.envelope.event.type !== "tool-call-requested") return;
    const { toolRequestId } = frame.envelope.event;
    void page.request(
      "submitToolResult",
      { sessionId: frame.envelope.sessionId, toolRequestId, outcome: { ok: true, result: { added: true } } },
      ORIGIN,
    );
  });
  const session = await page.request("createSession", { provider: "claude", skills: { guidance: "bench", tools: [addTodoTool(30_000)] } }, ORIGIN);
  await page.request("sendText", { sessionId: session.sessionId, turnId: "bench", text: "hang" }, ORIGIN);
  const capability = await capabilityOfHangingAgent(session.workspace.path);

  const cleanEnv = { PATH: process.env.PATH ?? "" };
  const agentEnv = { ...cleanEnv, PEDELEC_HOME: home, PEDELEC_THREAD_CAPABILITY: capability };
  const commands = {
    node: () => runNode(["-e", "0"], cleanEnv),
    help: () => runNode([PEDELEC_CLI, "--help"], cleanEnv),
    toolCall: () => runNode([PEDELEC_CLI, "--thread-id", session.sessionId, "tool-call", "add_todo", '{"title":"bench"}'], agentEnv),
  };
  // One warm-up of each, so the first sample does not pay for the page cache.
  expect((await commands.help()).code).toBe(0);
  expect(JSON.parse((await commands.toolCall()).stdout)).toEqual({ added: true });
  await commands.node();

  const samples = { node: [] as number[], help: [] as number[], toolCall: [] as number[] };
  for (let index = 0; index < RUNS; index += 1) {
    samples.node.push((await commands.node()).elapsed);
    const help = await commands.help();
    expect(help.code).toBe(0);
    samples.help.push(help.elapsed);
    const call = await commands.toolCall();
    expect(call.code).toBe(0);
    samples.toolCall.push(call.elapsed);
  }
  const node = latencySummary(samples.node);
  const help = latencySummary(samples.help);
  const toolCall = latencySummary(samples.toolCall);
  console.log(`pedelec-cli start-up, ${RUNS} runs each (interleaved, clean environment):`);
  console.log(`  node -e 0:                          median ${ms(node.median)}, p95 ${ms(node.p95)}`);
  console.log(
    `  pedelec-cli --help:                 median ${ms(help.median)}, p95 ${ms(help.p95)}, ratio ${(help.median / node.median).toFixed(2)}×`,
  );
  console.log(
    `  pedelec-cli tool-call through Core: median ${ms(toolCall.median)}, p95 ${ms(toolCall.p95)}, ratio ${(toolCall.median / node.median).toFixed(2)}×`,
  );
  page.close();
  await core.stop();
  await rm(home, { recursive: true, force: true });
});
