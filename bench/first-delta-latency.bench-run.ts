// Prints: Chromium launch → first session created, and median / p95 of sendText → first chat delta over 100 turns,
// each against baselines measured in the same run (the stand-in agent alone, and a page ↔ extension round trip).
import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { it } from "vitest";
import { openSdkPage, repoRoot, setUpE2e } from "../test/e2e/harness.js";
import { latencySummary, ms } from "./latency-summary.js";

const TURNS = Number.parseInt(process.env.BENCH_TURNS ?? "100", 10);

/** The stand-in agent alone: spawn → first text_delta line on stdout, no Pedelec in between. */
async function standInFirstDelta(): Promise<number> {
  const state = await mkdtemp(join(tmpdir(), "pedelec-bench-claude-"));
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(
      join(repoRoot, "test/stand-ins/claude/claude"),
      ["-p", "--output-format", "stream-json", "--verbose", "--include-partial-messages"],
      {
        cwd: state,
        env: { ...process.env, CLAUDE_CONFIG_DIR: state },
      },
    );
    let seen = false;
    let buffer = "";
    child.stdout.on("data", (chunk: Buffer) => {
      buffer += chunk.toString();
      if (!seen && buffer.includes('"text_delta"')) {
        seen = true;
        resolve(performance.now() - started);
      }
    });
    child.on("error", reject);
    child.on("close", () => {
      void rm(state, { recursive: true, force: true });
      if (!seen) reject(new Error("the stand-in printed no delta"));
    });
    child.stdin.end("reply: benchmark");
  });
}

it("measures launch → first session and sendText → first delta", async () => {
  const environment = await setUpE2e();
  try {
    const worker = environment.context.serviceWorkers()[0] ?? (await environment.context.waitForEvent("serviceworker"));
    const origin = new URL(environment.server.url).origin;
    // Approval is the user's time, not ours: pre-approve the origin the way the popup stores it.
    await worker.evaluate((approved) => chrome.storage.local.set({ approvedOrigins: [approved] }), origin);
    const page = await openSdkPage(environment);
    const created = await page.evaluate(async () => {
      const w = window as any;
      w.pedelec = new w.sdk.Pedelec();
      w.session = await w.pedelec.createSession({ provider: "claude" });
      return performance.timeOrigin + performance.now();
    });
    const launchToSession = created - (performance.timeOrigin + environment.launchedAt);

    const roundTrips: number[] = await page.evaluate(async (count) => {
      const w = window as any;
      const samples: number[] = [];
      for (let index = 0; index < count; index += 1) {
        const started = performance.now();
        await w.pedelec.getApprovalStatus();
        samples.push(performance.now() - started);
      }
      return samples;
    }, TURNS);

    const firstDeltas: number[] = await page.evaluate(async (count) => {
      const w = window as any;
      const samples: number[] = [];
      let started = 0;
      let pending: ((value: number) => void) | undefined;
      w.session.onChatDelta(() => {
        if (pending) {
          pending(performance.now() - started);
          pending = undefined;
        }
      });
      for (let index = 0; index < count; index += 1) {
        const first = new Promise<number>((resolve) => (pending = resolve));
        started = performance.now();
        const turn = w.session.sendText(`reply: turn ${index}`);
        samples.push(await first);
        await turn;
      }
      return samples;
    }, TURNS);

    const standIn: number[] = [];
    for (let index = 0; index < Math.min(TURNS, 30); index += 1) standIn.push(await standInFirstDelta());

    const delta = latencySummary(firstDeltas);
    const baseline = latencySummary(standIn);
    const bridge = latencySummary(roundTrips);
    console.log(`Chromium launch → first session created (Core started by the native host): ${ms(launchToSession)}`);
    console.log(`  of which Chromium launch: ${ms(environment.launchMs)}`);
    console.log(`sendText → first delta over ${firstDeltas.length} turns: median ${ms(delta.median)}, p95 ${ms(delta.p95)}`);
    console.log(
      `baseline, stand-in agent alone (spawn → first delta line), ${standIn.length} runs: median ${ms(baseline.median)}, p95 ${ms(baseline.p95)}`,
    );
    console.log(
      `ratio Pedelec / stand-in alone: median ${(delta.median / baseline.median).toFixed(2)}x, p95 ${(delta.p95 / baseline.p95).toFixed(2)}x`,
    );
    console.log(`page ↔ extension round trip (getApprovalStatus), ${roundTrips.length} runs: median ${ms(bridge.median)}, p95 ${ms(bridge.p95)}`);
  } finally {
    await environment.close();
  }
});
