// Two figures per real CLI (claude, codex, opencode from test/real-clis), each against a baseline measured in the same
// run, interleaved:
// 1. A scripted text turn sent from a page in real Chromium (extension, native host, Core, the CLI, the model server),
//    from `sendText()` to its settling, against the same CLI started by hand with the argv its adapter builds, the same
//    environment and the same first prompt on stdin, from spawn to exit. Goal: ≤ 1.15×.
// 2. A page tool round trip as the CLI's own shell sees it: the model's shell command times `pedelec-cli tool-call`
//    (through Core and the page's handler, which answers at once) and `node -e 0` in turn, in one shell. Goal: ≤ 2×.
//    The command is a loop, which a sandbox session's rules refuse, so this runs in a Full Access session (claude,
//    as root, needs IS_SANDBOX=1 for that, which only this bench sets).
// BENCH_REAL_CLI_ROUNDS sets the rounds of (1) (default 9; OpenCode runs a third of them, its start costs ~8 s of CPU).
import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { expect, it } from "vitest";
import { buildFirstPrompt } from "@pedelec/core/first-prompt";
import { buildClaudeArgs, CLAUDE_SANDBOX_ENV, claudeToolName } from "@pedelec/core/providers/claude/claude-args";
import { buildCodexArgs } from "@pedelec/core/providers/codex/codex-args";
import { buildOpencodeArgs, opencodeConfigContent, opencodeSandboxEnv } from "@pedelec/core/providers/opencode/opencode-args";
import { REAL_CLIS, realCliPath, type RealCli } from "../test/real-clis/real-clis.js";
import { grantFullAccess } from "../test/e2e/harness.js";
import { NATIVE_PAGE_TOOLS, openRealAgentSession, setUpRealAgent, type RealAgentEnvironment } from "../test/e2e/real-agent.js";
import type { ModelReply } from "../test/model-servers/model-server-types.js";
import { latencySummary, ms } from "./latency-summary.js";

const ROUNDS = Number.parseInt(process.env.BENCH_REAL_CLI_ROUNDS ?? "9", 10);
const TOOL_CALLS = 10;
const GUIDANCE = "A to-do board.";
/** The tools installRecorder and openRealAgentSession register, in their order. */
const TOOLS = [
  { name: "add_todo", description: "Add a card to the to-do board" },
  { name: "wait_for_user", description: "Wait until the user answers" },
];
/** Effort profile "medium" of each adapter's defaults: what a session without effortLevel snapshots. */
const MEDIUM_EFFORT: Record<RealCli, string[]> = {
  claude: ["--effort", "medium"],
  codex: ["-c", "model_reasoning_effort=medium"],
  opencode: ["--variant", "medium"],
};

function argvFor(cli: RealCli, workspacePath: string, home: string): { args: string[]; env: Record<string, string> } {
  // Run by hand, outside a turn of Core's: the session's MCP server starts, finds no thread, and the CLI goes on without it.
  const toolServer = { command: join(home, "bin", "pedelec-cli"), args: ["mcp"], envNames: [] };
  const input = {
    workspacePath,
    providerSessionId: null,
    model: null,
    effortArgv: MEDIUM_EFFORT[cli],
    access: "sandbox" as const,
    toolServer,
    serversOff: [],
  };
  switch (cli) {
    case "claude":
      // Run by hand, outside a turn of Core's: the session's MCP server starts, finds no thread, and claude goes on without it.
      return {
        args: buildClaudeArgs({ ...input, toolServer: { command: join(home, "bin", "pedelec-cli"), args: ["mcp"], envNames: [] } }),
        env: CLAUDE_SANDBOX_ENV,
      };
    case "codex":
      return { args: buildCodexArgs(input), env: {} };
    case "opencode":
      return {
        args: buildOpencodeArgs(input),
        env: { ...opencodeSandboxEnv(), OPENCODE_CONFIG_CONTENT: opencodeConfigContent(toolServer, undefined, []) },
      };
  }
}

/** Runs the CLI by hand as Core would, prompt on stdin; resolves with the wall time from spawn to exit. */
function runByHand(cli: RealCli, environment: RealAgentEnvironment, workspacePath: string, prompt: string): Promise<number> {
  const { args, env } = argvFor(cli, workspacePath, environment.e2e.home);
  const childEnv = {
    ...(environment.e2e.env as Record<string, string>),
    ...env,
    PATH: [join(environment.e2e.home, "bin"), process.env.PATH ?? ""].join(delimiter),
  };
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(realCliPath(cli), args, { cwd: workspacePath, env: childEnv, stdio: ["pipe", "ignore", "ignore"], detached: true });
    child.stdin.end(prompt);
    child.on("error", reject);
    child.on("close", (code) => (code === 0 ? resolve(performance.now() - started) : reject(new Error(`${cli} by hand exited ${code}`))));
  });
}

async function textTurns(cli: RealCli): Promise<{ pedelec: number[]; byHand: number[] }> {
  const environment = await setUpRealAgent(cli);
  const server = environment.server!;
  const workspace = await mkdtemp(join(tmpdir(), `pedelec-bench-${cli}-workspace-`));
  const rounds = cli === "opencode" ? Math.max(3, Math.round(ROUNDS / 3)) : ROUNDS;
  const samples = { pedelec: [] as number[], byHand: [] as number[] };
  try {
    let approve = true;
    for (let round = -1; round < rounds; round += 1) {
      // A new session each round, so every turn is a first turn with the whole first prompt, as the run by hand is.
      const { page, sessionId } = await openRealAgentSession(environment, { approve });
      approve = false;
      server.script({ kind: "text", deltas: ["Ready ", "when ", "you are."] });
      const elapsed = await page.evaluate(async () => {
        const started = performance.now();
        await (window as any).session.sendText("Say you are ready");
        return performance.now() - started;
      });
      await page.close();
      server.script({ kind: "text", deltas: ["Ready ", "when ", "you are."] });
      const prompt = buildFirstPrompt({ threadId: sessionId, guidance: GUIDANCE, tools: TOOLS, userText: "Say you are ready" });
      const byHand = await runByHand(cli, environment, workspace, prompt);
      // Round -1 warms both sides (the page cache, the CLI's first-run files).
      if (round < 0) continue;
      samples.pedelec.push(elapsed);
      samples.byHand.push(byHand);
    }
  } finally {
    await environment.close();
    await rm(workspace, { recursive: true, force: true });
  }
  return samples;
}

async function toolRoundTrips(cli: RealCli): Promise<{ toolCall: number[]; node: number[] }> {
  const environment = await setUpRealAgent(cli, { extraEnv: cli === "claude" ? { IS_SANDBOX: "1" } : {} });
  const server = environment.server!;
  try {
    const first = await openRealAgentSession(environment, { approve: true });
    await first.page.close();
    await grantFullAccess(environment.e2e, new URL(environment.e2e.server.url).origin);
    const { page, sessionId } = await openRealAgentSession(environment, { access: "full" });
    const call = `pedelec-cli --thread-id ${sessionId} tool-call add_todo '{"title":"bench"}' > /dev/null`;
    const command = `for i in $(seq ${TOOL_CALLS + 1}); do a=$(date +%s%N); node -e 0; b=$(date +%s%N); ${call}; c=$(date +%s%N); echo "timing $((b-a)) $((c-b))"; done`;
    let output = "";
    server.script({ kind: "shell", command }, (request) => {
      output = request.toolResults.join("\n");
      return { kind: "text", deltas: ["Done."] };
    });
    expect(await page.evaluate(() => (window as any).send("Time the tool"))).toEqual({ ok: true });
    const timings = [...output.matchAll(/timing (\d+) (\d+)/g)].map((match) => [Number(match[1]) / 1e6, Number(match[2]) / 1e6] as const);
    expect(timings).toHaveLength(TOOL_CALLS + 1);
    // The first pair warms the page cache.
    return { node: timings.slice(1).map(([node]) => node), toolCall: timings.slice(1).map(([, toolCall]) => toolCall) };
  } finally {
    await environment.close();
  }
}

/**
 * A page tool as the real CLI sees it: from the model's request that asks for the call to the request that brings its
 * result back, the CLI's own tool running included. The same Full Access session has both ways, so turns alternate: one
 * where the model calls the tool natively (the session's MCP server, started once per turn) and one where it runs
 * `pedelec-cli tool-call` in its shell (a process per call), each with TOOL_CALLS calls.
 */
async function nativeAgainstShell(cli: RealCli): Promise<{ native: number[]; shell: number[] }> {
  const native = NATIVE_PAGE_TOOLS[cli];
  if (native === null) throw new Error(`${cli} has no native page tools`);
  const environment = await setUpRealAgent(cli, { extraEnv: cli === "claude" ? { IS_SANDBOX: "1" } : {} });
  const server = environment.server!;
  const samples = { native: [] as number[], shell: [] as number[] };
  try {
    const first = await openRealAgentSession(environment, { approve: true });
    await first.page.close();
    await grantFullAccess(environment.e2e, new URL(environment.e2e.server.url).origin);
    const { page, sessionId } = await openRealAgentSession(environment, { access: "full" });
    const rounds = Math.max(2, Math.round(ROUNDS / 3));
    for (let round = -1; round < rounds; round += 1) {
      for (const way of ["native", "shell"] as const) {
        const call: ModelReply =
          way === "native"
            ? native.call("add_todo", { title: "bench" })
            : { kind: "shell", command: `pedelec-cli --thread-id ${sessionId} tool-call add_todo '{"title":"bench"}'` };
        const from = server.requests.length;
        server.script(...Array.from({ length: TOOL_CALLS }, () => call), { kind: "text", deltas: ["Done."] });
        expect(await page.evaluate((text) => (window as any).send(text), `Add ${TOOL_CALLS} cards`)).toEqual({ ok: true });
        const turn = server.requests.slice(from).filter((request) => request.purpose === "turn");
        expect(turn).toHaveLength(TOOL_CALLS + 1);
        // Round -1 warms both ways.
        if (round < 0) continue;
        for (let index = 1; index < turn.length; index += 1) samples[way].push(turn[index]!.receivedAt - turn[index - 1]!.receivedAt);
      }
    }
    await page.close();
  } finally {
    await environment.close();
  }
  return samples;
}

/** The first prompt's size for `count` tools like the ones the tests register, with the shell rules and with native tools. */
function firstPromptBytes(count: number): { shell: number; native: number } {
  const tools = Array.from({ length: count }, (_, index) => ({ name: `tool_${index}`, description: "Add a card to the to-do board" }));
  const input = { threadId: "3f2a9c1e-0000-4000-8000-000000000001", guidance: GUIDANCE, tools, userText: "Say you are ready" };
  const bytes = (text: string) => Buffer.byteLength(text, "utf8");
  return { shell: bytes(buildFirstPrompt(input)), native: bytes(buildFirstPrompt({ ...input, nativeToolName: claudeToolName })) };
}

it("measures page tools as native MCP tools against pedelec-cli in the shell, as the real CLI sees them", async () => {
  const lines: string[] = [];
  for (const cli of REAL_CLIS.filter((candidate) => NATIVE_PAGE_TOOLS[candidate] !== null)) {
    const { native, shell } = await nativeAgainstShell(cli);
    const nativeSummary = latencySummary(native);
    const shellSummary = latencySummary(shell);
    lines.push(
      `${cli} page tool call (${native.length} calls each way, alternating turns): native ${ms(nativeSummary.median)} (p95 ${ms(nativeSummary.p95)}), ` +
        `pedelec-cli in the shell ${ms(shellSummary.median)} (p95 ${ms(shellSummary.p95)}), ratio ${(nativeSummary.median / shellSummary.median).toFixed(2)}× (goal ≤ 0.5×)`,
    );
  }
  for (const count of [1, 10]) {
    const { shell, native } = firstPromptBytes(count);
    lines.push(`first prompt with ${count} tool(s): ${shell} bytes with the shell rules, ${native} with native tools (${shell - native} fewer)`);
  }
  console.log(`\nNative page tools:\n${lines.join("\n")}`);
});

it("measures real CLI turns through Pedelec against the CLI by hand, and tool round trips against node -e 0", async () => {
  const lines: string[] = [];
  for (const cli of REAL_CLIS) {
    const turns = await textTurns(cli);
    const pedelec = latencySummary(turns.pedelec);
    const byHand = latencySummary(turns.byHand);
    lines.push(
      `${cli} text turn (${turns.pedelec.length} rounds, interleaved): through the page median ${ms(pedelec.median)} (p95 ${ms(pedelec.p95)}), ` +
        `by hand ${ms(byHand.median)} (p95 ${ms(byHand.p95)}), ratio ${(pedelec.median / byHand.median).toFixed(2)}× (goal ≤ 1.15×)`,
    );
    const trips = await toolRoundTrips(cli);
    const toolCall = latencySummary(trips.toolCall);
    const node = latencySummary(trips.node);
    lines.push(
      `${cli} tool round trip in its shell (${trips.toolCall.length} calls): pedelec-cli tool-call median ${ms(toolCall.median)}, ` +
        `node -e 0 ${ms(node.median)}, ratio ${(toolCall.median / node.median).toFixed(2)}× (goal ≤ 2×)`,
    );
    console.log(lines.slice(-2).join("\n"));
  }
  console.log(`\nReal CLIs:\n${lines.join("\n")}`);
});
