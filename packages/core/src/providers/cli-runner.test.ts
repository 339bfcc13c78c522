import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { runCliTurn, type CliStreamOutput, type CliStreamParser, type CliTurnPlan } from "./cli-runner.js";
import type { ProviderEvent, ProviderTurnRequest } from "./provider-adapter.js";
import { TEST_TOOL_SERVER } from "../testing/provider-turns.js";

let workspace: string;
beforeEach(async () => {
  workspace = await mkdtemp(path.join(tmpdir(), "pedelec-cli-runner-"));
});
afterEach(async () => {
  await rm(workspace, { recursive: true, force: true });
});

/** A CLI that prints the given lines, then waits far longer than any test (as claude does retrying a refused key). */
function hangingCli(lines: readonly string[]): string[] {
  return ["-e", `for (const line of ${JSON.stringify(lines)}) console.log(line); setInterval(() => {}, 1000);`];
}

/** A parser that turns every line into output-seen, and the lines `stops` names into stop requests too. */
function parserStoppingOn(stops: Record<string, PedelecError>, atFinish: CliStreamOutput[] = []): CliStreamParser<{ lines: string[] }> {
  const lines: string[] = [];
  return {
    feed: (line) => {
      lines.push(line);
      const stop = stops[line];
      return stop === undefined ? [{ type: "output-seen" }] : [{ type: "output-seen" }, { type: "turn-stop-requested", error: stop }];
    },
    lineDropped: () => [{ type: "output-seen" }],
    finish: () => atFinish,
    summary: () => ({ lines }),
  };
}

function request(signal: AbortSignal, pids: number[]): ProviderTurnRequest {
  return {
    executablePath: process.execPath,
    prompt: "",
    workspacePath: workspace,
    providerSessionId: null,
    access: "sandbox",
    model: null,
    effortArgv: [],
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
    toolServer: TEST_TOOL_SERVER,
    signal,
    onProcessStarted: (pid) => pids.push(pid),
  };
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function run(
  args: string[],
  parser: CliStreamParser<{ lines: string[] }>,
  options: { onEvent?: (event: ProviderEvent, controller: AbortController) => void } = {},
) {
  const controller = new AbortController();
  const pids: number[] = [];
  const events: ProviderEvent[] = [];
  let outcomeAsked = false;
  const plan: CliTurnPlan<{ lines: string[] }> = {
    args,
    stdin: "",
    parser,
    outcome: () => {
      outcomeAsked = true;
      return { ok: true };
    },
  };
  const startedAt = Date.now();
  const outcome = await runCliTurn(
    "fake-cli",
    plan,
    request(controller.signal, pids),
    (event) => {
      events.push(event);
      options.onEvent?.(event, controller);
    },
    { killGraceMs: 500 },
  );
  return { outcome, events, pids, outcomeAsked, elapsedMs: Date.now() - startedAt };
}

describe("runCliTurn and a parser's request to stop the turn", () => {
  const refused = new PedelecError("PROVIDER_NOT_AUTHENTICATED", "the key was refused", { provider: "claude" });

  it("kills the CLI at once and fails the turn with the request's error, without asking the plan's outcome", async () => {
    const { outcome, events, pids, outcomeAsked, elapsedMs } = await run(
      hangingCli(["starting", "refused", "never read"]),
      parserStoppingOn({ refused }),
    );
    expect(outcome).toEqual({ ok: false, error: refused });
    expect(outcomeAsked).toBe(false);
    expect(elapsedMs).toBeLessThan(5_000);
    // The request itself never reaches Core; the events around it do.
    expect(events.every((event) => event.type === "output-seen")).toBe(true);
    expect(events.length).toBeGreaterThanOrEqual(2);
    expect(pids).toHaveLength(1);
    expect(isRunning(pids[0] ?? 0)).toBe(false);
  });

  it("keeps the first request when several come", async () => {
    const second = new PedelecError("PROVIDER_FAILED", "second");
    const { outcome } = await run(hangingCli(["refused", "again"]), parserStoppingOn({ refused, again: second }));
    expect(outcome).toEqual({ ok: false, error: refused });
  });

  it("lets a cancel that came first win over a later request", async () => {
    const cancelled = new PedelecError("SESSION_ENDED", "the session ended");
    const { outcome } = await run(hangingCli(["refused"]), parserStoppingOn({ refused }), {
      // The output-seen of the same line comes before its stop request: the page's cancel lands in between.
      onEvent: (_event, controller) => controller.abort(cancelled),
    });
    expect(outcome).toEqual({ ok: false, error: cancelled });
  });

  it("honours a request made when the stream ended, after the CLI exited on its own", async () => {
    const { outcome, outcomeAsked } = await run(
      ["-e", "console.log('done')"],
      parserStoppingOn({}, [{ type: "turn-stop-requested", error: refused }]),
    );
    expect(outcome).toEqual({ ok: false, error: refused });
    expect(outcomeAsked).toBe(false);
  });

  it("asks the plan's outcome when no stop was requested", async () => {
    const { outcome, outcomeAsked } = await run(["-e", "console.log('done')"], parserStoppingOn({}));
    expect(outcome).toEqual({ ok: true });
    expect(outcomeAsked).toBe(true);
  });
});
