// Prints the median time from launching Chromium to the page's first createSession resolving, when nothing of
// Pedelec runs yet: Chrome starts the native host, the host starts Core, Core finds the provider (the claude stand-in)
// and creates the session. The goal is at most 1.2 s. Also prints where the time went, from the host's and Core's logs,
// and createSession through the whole chain once everything is warm (the goal is a median under 15 ms).
//
// Each run is a user who approved the page's origin earlier: a fresh PEDELEC_HOME and profile, the origin approved and
// one session created and ended in a first browser session, then the browser quit and Core stopped, and the clock
// starts as Chromium starts again.
// BENCH_COLD_SESSION_DEFAULT_PROVIDER=claude sets claude as Pedelec's default provider first (as the control panel
// would); by default no default provider is set.
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { it } from "vitest";
import { openSdkPage, setUpE2e, type E2eEnvironment } from "../test/e2e/harness.js";
import { latencySummary, ms } from "./latency-summary.js";

const RUNS = Number.parseInt(process.env.BENCH_COLD_SESSION_RUNS ?? "10", 10);
const DEFAULT_PROVIDER = process.env.BENCH_COLD_SESSION_DEFAULT_PROVIDER;
const GOAL_MS = 1_200;
/** Sessions created after the first in each run, for createSession through the whole chain once all is warm. */
const WARM_RUNS = 20;
const WARM_GOAL_MS = 15;

/** Moments of one cold start, in ms since the epoch. */
interface ColdStart {
  launched: number;
  browserUp: number;
  pageReady: number;
  sessionCreated: number;
  /** createSession → resolved for the sessions created after the first, through the same page, extension and host. */
  warmCreates: number[];
  /** getSettings round trips through the same chain to Core, interleaved with those: the chain's own cost. */
  warmBaselines: number[];
  hostStarted?: number;
  coreLaunched?: number;
  coreListening?: number;
}

/**
 * The time of the first line of a JSON-lines log whose message is `message`, logged at `after` (ms since the epoch) or
 * later: the line's own time, or the one in its field `timeField` when it has one (a moment before the logger ran).
 */
async function loggedAt(file: string, message: string, after: number, timeField?: string): Promise<number | undefined> {
  const text = await readFile(file, "utf8").catch(() => "");
  for (const line of text.split("\n")) {
    if (!line.includes(message)) continue;
    const entry = JSON.parse(line) as { time: string; message: string } & Record<string, unknown>;
    const field = timeField === undefined ? undefined : entry[timeField];
    const time = Date.parse(typeof field === "string" ? field : entry.time);
    if (entry.message === message && time >= after) return time;
  }
  return undefined;
}

async function coldStart(): Promise<ColdStart> {
  const environment: E2eEnvironment = await setUpE2e();
  try {
    if (DEFAULT_PROVIDER !== undefined) {
      const set = await environment.pedelec("config", "set", "defaultProvider", DEFAULT_PROVIDER);
      if (set.code !== 0) throw new Error(`pedelec config failed: ${set.stderr}`);
    }
    const worker = environment.context.serviceWorkers()[0] ?? (await environment.context.waitForEvent("serviceworker"));
    const origin = new URL(environment.server.url).origin;
    // What the approval window stores when the user approves the origin.
    await worker.evaluate((approved) => chrome.storage.local.set({ approvedOrigins: [approved], approvalTimes: { [approved]: Date.now() } }), origin);
    // The user approved the origin as a page asked for a session, which Core then created: the session is ended, and
    // what Core keeps of that run (its probe of the provider) stays, as it would for the user.
    const earlier = await openSdkPage(environment);
    await earlier.evaluate(async () => {
      const session = await new (window as any).sdk.Pedelec().createSession({ provider: "claude" });
      await session.end();
    });
    await environment.context.close();
    await environment.pedelec("stop");

    const launched = performance.timeOrigin + performance.now();
    await environment.reopenBrowser();
    const browserUp = performance.timeOrigin + performance.now();
    const page = await openSdkPage(environment);
    const pageReady = performance.timeOrigin + performance.now();
    const { sessionCreated, warmCreates, warmBaselines } = await page.evaluate(async (warmRuns) => {
      const w = window as any;
      const pedelec = new w.sdk.Pedelec();
      const addTodo = w.sdk.defineTool({
        name: "add_todo",
        description: "Add a card to the to-do board",
        argsSchema: { type: "object", properties: { title: { type: "string", minLength: 1 } }, required: ["title"], additionalProperties: false },
      });
      const options = { provider: "claude", skills: { guidance: "A to-do board.", tools: [addTodo] } };
      const first = await pedelec.createSession(options);
      const sessionCreated = performance.timeOrigin + performance.now();
      await first.end();
      const warmCreates: number[] = [];
      const warmBaselines: number[] = [];
      for (let index = 0; index < warmRuns; index += 1) {
        let started = performance.now();
        await pedelec.getSettings();
        warmBaselines.push(performance.now() - started);
        started = performance.now();
        const session = await pedelec.createSession(options);
        warmCreates.push(performance.now() - started);
        await session.end();
      }
      return { sessionCreated, warmCreates, warmBaselines };
    }, WARM_RUNS);
    const logs = join(environment.home, "logs");
    return {
      launched,
      browserUp,
      pageReady,
      sessionCreated,
      warmCreates,
      warmBaselines,
      hostStarted: await loggedAt(join(logs, "native-host.log"), "native host started", launched),
      // The host's entry starts Core before the rest of the host loads, and says when in the line it logs later.
      coreLaunched: await loggedAt(join(logs, "native-host.log"), "launched Core", launched, "launchedAt"),
      coreListening: await loggedAt(join(logs, "core.log"), "Core listening", launched),
    };
  } finally {
    await environment.close();
  }
}

/** A moment of a cold start: the fields that hold one time. */
type Moment = Exclude<keyof ColdStart, "warmCreates" | "warmBaselines">;

/** Median of `to - from` over the runs that logged both. */
function medianSpan(runs: readonly ColdStart[], from: Moment, to: Moment): string {
  const spans = runs.flatMap((run) => (run[from] !== undefined && run[to] !== undefined ? [run[to]! - run[from]!] : []));
  return spans.length === 0 ? "not logged" : ms(latencySummary(spans).median);
}

it("measures Chromium launch → first createSession, nothing of Pedelec running", async () => {
  // One run first, unmeasured: the first start of anything reads its files from disk.
  await coldStart();
  const runs: ColdStart[] = [];
  for (let index = 0; index < RUNS; index += 1) runs.push(await coldStart());
  const total = latencySummary(runs.map((run) => run.sessionCreated - run.launched));
  const setting = DEFAULT_PROVIDER === undefined ? "no default provider set" : `default provider ${DEFAULT_PROVIDER}`;
  console.log(`Chromium launch → first createSession resolved (claude stand-in, one tool, ${setting}), ${runs.length} runs:`);
  console.log(`  median ${ms(total.median)}, p95 ${ms(total.p95)} (goal ≤ ${GOAL_MS} ms: ${total.median <= GOAL_MS ? "met" : "not met"})`);
  console.log(`  each run: ${runs.map((run) => (run.sessionCreated - run.launched).toFixed(0)).join(", ")} ms`);
  console.log(`  of which createSession called → resolved (what Pedelec adds): median ${medianSpan(runs, "pageReady", "sessionCreated")}`);
  const warm = latencySummary(runs.flatMap((run) => run.warmCreates));
  const chain = latencySummary(runs.flatMap((run) => run.warmBaselines));
  console.log(`createSession through page → extension → host → Core once warm (one tool), ${runs.length * WARM_RUNS} sessions:`);
  console.log(`  median ${ms(warm.median)}, p95 ${ms(warm.p95)} (goal < ${WARM_GOAL_MS} ms: ${warm.median < WARM_GOAL_MS ? "met" : "not met"})`);
  console.log(`  baseline, getSettings through the same chain: median ${ms(chain.median)}, p95 ${ms(chain.p95)}`);
  console.log("  medians of the cold start's parts:");
  console.log(`    Chromium launch (until Playwright has the browser): ${medianSpan(runs, "launched", "browserUp")}`);
  console.log(`    page open and the SDK loaded: ${medianSpan(runs, "browserUp", "pageReady")}`);
  // The extension opens its link as its worker starts, so the host and Core start while the page loads.
  console.log(`    Chromium launch → native host started: ${medianSpan(runs, "launched", "hostStarted")}`);
  console.log(
    `    Chromium launch → Core launched (by the host's entry, before the rest of the host loaded): ${medianSpan(runs, "launched", "coreLaunched")}`,
  );
  console.log(`    Core launched → native host started (its first log line, once loaded): ${medianSpan(runs, "coreLaunched", "hostStarted")}`);
  console.log(`    Core launched → Core listening: ${medianSpan(runs, "coreLaunched", "coreListening")}`);
  console.log(`    Core listening → session in the page: ${medianSpan(runs, "coreListening", "sessionCreated")}`);
});
