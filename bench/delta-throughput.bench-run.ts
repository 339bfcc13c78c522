// Prints how many chat deltas per second reach a page through Pedelec (real Chromium, the unpacked extension, the
// native host and Core), against the same stand-in lines read from a pipe and parsed by Core's own claude parser, both
// measured in this run, interleaved, after warm-up turns on both sides (printed too); the first-delta latency of a 1-delta and a many-delta turn; where the CPU time goes
// (Chromium's processes, the native host, Core, the stand-in); and what one zod check of a delta event costs per hop.
import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { expect, it } from "vitest";
import { z } from "zod";
import { ClaudeStreamParser } from "@pedelec/core/providers/claude/claude-stream-parser";
import { LineSplitter } from "@pedelec/core/providers/line-splitter";
import { DEFAULT_MAX_LINE_BYTES } from "@pedelec/core/providers/provider-process";
import { coreEventFrameSchema, coreFatalFrameSchema, coreResponseFrameSchema, coreServerFrameSchema } from "@pedelec/protocol/core-wire";
import { chunkFrameSchema, hostStatusFrameSchema, hostToExtensionMessageSchema } from "@pedelec/protocol/native-wire";
import { runOutputFrameSchema } from "@pedelec/protocol/script-run";
import { extensionToPageMessageSchema } from "@pedelec/protocol/page-wire";
import { openSdkPage, repoRoot, setUpE2e, type E2eEnvironment } from "../test/e2e/harness.js";
import { latencySummary, ms } from "./latency-summary.js";
import { addToSnapshot, cpuBetween, descendantsOf, readAllProcesses, readProcessCpu, type CpuSnapshot } from "./process-cpu-time.js";

const DELTAS = Number.parseInt(process.env.BENCH_DELTAS ?? "10000", 10);
/** Rounds that count: with nine, the ratio's median moved by ±0.08 from run to run on a shared two-core machine. */
const ROUNDS = Math.max(3, Number.parseInt(process.env.BENCH_ROUNDS ?? "25", 10));
/** Long turns on each side before the rounds that count. */
const WARM_UP_TURNS = Math.max(1, Number.parseInt(process.env.BENCH_WARM_UP_TURNS ?? "3", 10));
/** 1-delta turns per round, for each side. */
const SHORT_TURNS = Number.parseInt(process.env.BENCH_SHORT_TURNS ?? "5", 10);
/** A turn that has not delivered everything by then has lost something. */
const TURN_DEADLINE_MS = 300_000;

const STAND_IN = join(repoRoot, "test/stand-ins/claude/claude");
/** What Core passes the claude CLI for a turn's output (the access flags do not change what it prints). */
const STREAM_ARGS = ["-p", "--output-format", "stream-json", "--verbose", "--include-partial-messages"];
/** The stand-in answers it in STAND_IN_DELTA_COUNT deltas, "0 ", "1 ", "2 ", … */
const MANY_DELTAS = "reply-deltas";
/** The stand-in answers it in one delta, "x". */
const ONE_DELTA = "reply: x";

/** The text the deltas of a reply-deltas turn must add up to, exactly and in order. */
function expectedText(count: number): string {
  return Array.from({ length: count }, (_, index) => `${index} `).join("");
}

interface TurnTiming {
  /** Send (the page's sendText, or spawning the stand-in) → first delta. */
  firstMs: number;
  /** Send → the delta that completed the expected text. */
  lastMs: number;
  /** Chat-delta events that carried the text (fewer than the stand-in's deltas where deltas were joined). */
  events: number;
  text: string;
}

/** One turn in the page: sends `directive` and waits, with a deadline, until `expectedLength` characters arrived. */
function pageTurn(page: Page, directive: string, expectedLength: number): Promise<TurnTiming> {
  return page.evaluate(
    async ({ directive, expectedLength, deadlineMs }) => {
      const session = (window as any).session;
      const pieces: string[] = [];
      let length = 0;
      let firstAt: number | undefined;
      let lastAt: number | undefined;
      let complete: () => void = () => undefined;
      const completed = new Promise<void>((resolve) => (complete = resolve));
      const stop = session.onChatDelta((delta: string) => {
        firstAt ??= performance.now();
        pieces.push(delta);
        length += delta.length;
        if (length >= expectedLength && lastAt === undefined) {
          lastAt = performance.now();
          complete();
        }
      });
      let timer: ReturnType<typeof setTimeout> | undefined;
      const deadline = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`only ${length} of ${expectedLength} characters arrived within ${deadlineMs} ms`)), deadlineMs);
      });
      const startedAt = performance.now();
      try {
        const turn: Promise<void> = session.sendText(directive);
        await Promise.race([completed, deadline]);
        // The turn's end comes after its last delta: anything sent after the expected text shows up in `text`.
        await Promise.race([turn, deadline]);
      } finally {
        clearTimeout(timer);
        stop();
      }
      return { firstMs: firstAt! - startedAt, lastMs: lastAt! - startedAt, events: pieces.length, text: pieces.join("") };
    },
    { directive, expectedLength, deadlineMs: TURN_DEADLINE_MS },
  );
}

interface PipeTurn extends TurnTiming {
  /** CPU seconds of this process (the reader) and of the stand-in, which this process waited for. */
  readerSeconds: number;
  standInSeconds: number;
}

/**
 * The baseline: the stand-in started here, its stdout read from the pipe, split into lines and parsed by the claude
 * parser Core uses, with nothing after it.
 */
async function pipeTurn(directive: string, deltaCount: number, expectedLength: number): Promise<PipeTurn> {
  const state = await mkdtemp(join(tmpdir(), "pedelec-bench-pipe-"));
  const self = () => readProcessCpu(process.pid)!;
  const before = self();
  const readerBefore = process.cpuUsage();
  try {
    return await new Promise<PipeTurn>((resolve, reject) => {
      const pieces: string[] = [];
      let length = 0;
      let firstAt: number | undefined;
      let lastAt: number | undefined;
      const parser = new ClaudeStreamParser();
      const take = (events: ReturnType<ClaudeStreamParser["feed"]>): void => {
        for (const event of events) {
          if (event.type !== "text-delta") continue;
          firstAt ??= performance.now();
          pieces.push(event.delta);
          length += event.delta.length;
          if (length >= expectedLength) lastAt ??= performance.now();
        }
      };
      const splitter = new LineSplitter({
        maxLineBytes: DEFAULT_MAX_LINE_BYTES,
        onLine: (line) => take(parser.feed(line)),
        onLineDropped: () => take(parser.lineDropped()),
      });
      const startedAt = performance.now();
      const child = spawn(STAND_IN, STREAM_ARGS, {
        cwd: state,
        env: { ...process.env, CLAUDE_CONFIG_DIR: state, STAND_IN_DELTA_COUNT: String(deltaCount) },
        stdio: ["pipe", "pipe", "inherit"],
      });
      child.stdout.on("data", (chunk: Buffer) => splitter.push(chunk));
      child.stdout.on("end", () => splitter.end());
      child.on("error", reject);
      child.on("close", (code) => {
        take(parser.finish());
        if (code !== 0 || firstAt === undefined || lastAt === undefined) {
          reject(new Error(`the stand-in exited with ${code} after ${length} of ${expectedLength} characters`));
          return;
        }
        const reader = process.cpuUsage(readerBefore);
        const after = self();
        resolve({
          firstMs: firstAt - startedAt,
          lastMs: lastAt - startedAt,
          events: pieces.length,
          text: pieces.join(""),
          readerSeconds: (reader.user + reader.system) / 1e6,
          standInSeconds: after.reapedChildrenSeconds - before.reapedChildrenSeconds,
        });
      });
      child.stdin.end(directive);
    });
  } finally {
    await rm(state, { recursive: true, force: true });
  }
}

/** The process groups CPU time is reported for, in print order. */
const CPU_GROUPS = [
  "Chromium browser process",
  "Chromium extension renderer (service worker)",
  "Chromium page renderer",
  "Chromium other (utility, zygote, gpu)",
  "native host",
  "Core",
  "stand-in agent (reaped by Core)",
  "bench process (Playwright)",
] as const;

/** What each of this environment's processes has used so far (Chromium found through its profile folder). */
function cpuSnapshot(environment: E2eEnvironment, corePid: number): CpuSnapshot {
  const processes = readAllProcesses();
  const snapshot: CpuSnapshot = new Map();
  const browser = [...processes.values()].find(
    (found) => found.commandLine.includes(`--user-data-dir=${environment.userDataDir}`) && !found.commandLine.includes("--type="),
  );
  const coreTree = descendantsOf(corePid, processes);
  for (const pid of browser ? descendantsOf(browser.pid, processes) : []) {
    if (coreTree.has(pid)) continue;
    const found = processes.get(pid)!;
    const commandLine = found.commandLine;
    const group = commandLine.includes("native-host-entry")
      ? "native host"
      : !commandLine.includes("--type=")
        ? "Chromium browser process"
        : commandLine.includes("--type=renderer") && commandLine.includes("--extension-process")
          ? "Chromium extension renderer (service worker)"
          : commandLine.includes("--type=renderer")
            ? "Chromium page renderer"
            : "Chromium other (utility, zygote, gpu)";
    addToSnapshot(snapshot, group, pid, found.ownSeconds);
  }
  const core = processes.get(corePid);
  if (core) {
    addToSnapshot(snapshot, "Core", corePid, core.ownSeconds);
    addToSnapshot(snapshot, "stand-in agent (reaped by Core)", corePid, core.reapedChildrenSeconds);
  }
  const bench = process.cpuUsage();
  addToSnapshot(snapshot, "bench process (Playwright)", process.pid, (bench.user + bench.system) / 1e6);
  return snapshot;
}

function median(values: readonly number[]): number {
  return latencySummary(values).median;
}

const perSecond = (count: number, milliseconds: number): number => count / (milliseconds / 1000);
const rate = (value: number): string => `${Math.round(value).toLocaleString("en-US")}/s`;

/** Fails the run on any lost, repeated, reordered or extra text. */
function checkText(side: string, timing: TurnTiming, expected: string): void {
  if (timing.text === expected) return;
  let index = 0;
  while (index < expected.length && timing.text[index] === expected[index]) index += 1;
  throw new Error(
    `${side}: the deltas do not add up to the expected text (${timing.text.length} characters for ${expected.length}; ` +
      `first difference at ${index}: ${JSON.stringify(timing.text.slice(index, index + 24))} instead of ` +
      `${JSON.stringify(expected.slice(index, index + 24))})`,
  );
}

const load = (): string =>
  loadavg()
    .map((value) => value.toFixed(1))
    .join(" ");

/** Microseconds one safeParse of `message` takes, over enough calls to be stable. */
function parseMicroseconds(parse: () => { success: boolean }): number {
  const calls = 20_000;
  for (let index = 0; index < 2_000; index += 1) parse();
  const startedAt = performance.now();
  for (let index = 0; index < calls; index += 1) {
    if (!parse().success) throw new Error("a chat-delta message failed its own schema");
  }
  return ((performance.now() - startedAt) * 1000) / calls;
}

it(`measures ${DELTAS} chat deltas into a page against the same lines from a pipe`, async () => {
  console.log(`load average at the start (1, 5, 15 min): ${load()}; other work on this machine slows both sides`);
  const expected = expectedText(DELTAS);
  const single = "x";
  // Read by the stand-in only; it reaches it through the browser's environment, the native host and Core.
  const previousCount = process.env.STAND_IN_DELTA_COUNT;
  process.env.STAND_IN_DELTA_COUNT = String(DELTAS);
  let environment: E2eEnvironment;
  try {
    environment = await setUpE2e();
  } finally {
    if (previousCount === undefined) delete process.env.STAND_IN_DELTA_COUNT;
    else process.env.STAND_IN_DELTA_COUNT = previousCount;
  }
  try {
    const worker = environment.context.serviceWorkers()[0] ?? (await environment.context.waitForEvent("serviceworker"));
    const origin = new URL(environment.server.url).origin;
    // Approval is the user's time, not ours: pre-approve the origin the way the popup stores it.
    await worker.evaluate((approved) => chrome.storage.local.set({ approvedOrigins: [approved] }), origin);
    const page = await openSdkPage(environment);
    await page.evaluate(async () => {
      const w = window as any;
      w.pedelec = new w.sdk.Pedelec();
      w.session = await w.pedelec.createSession({ provider: "claude" });
    });
    const corePid = Number.parseInt(await readFile(join(environment.home, "run", "core.lock"), "utf8"), 10);

    // Warm-up, not counted but printed: the first turn carries the first prompt, both sides load their code, and V8
    // optimizes the parsing path over the first tens of thousands of lines (a new Core's first long answers are slower).
    const streamed = (timing: TurnTiming) => perSecond(DELTAS - 1, timing.lastMs - timing.firstMs);
    for (let turn = 1; turn <= WARM_UP_TURNS; turn += 1) {
      const pedelec = await pageTurn(page, MANY_DELTAS, expected.length);
      checkText("Pedelec warm-up", pedelec, expected);
      const pipe = await pipeTurn(MANY_DELTAS, DELTAS, expected.length);
      checkText("pipe warm-up", pipe, expected);
      console.log(
        `warm-up turn ${turn}: Pedelec ${rate(streamed(pedelec))}, pipe ${rate(streamed(pipe))}, ratio ${(streamed(pedelec) / streamed(pipe)).toFixed(2)}×`,
      );
    }

    const pedelecRuns: TurnTiming[] = [];
    const pipeRuns: PipeTurn[] = [];
    const pedelecCpu: Map<string, number>[] = [];
    const pedelecShort: number[] = [];
    const pipeShort: number[] = [];
    for (let round = 1; round <= ROUNDS; round += 1) {
      const before = cpuSnapshot(environment, corePid);
      const pedelec = await pageTurn(page, MANY_DELTAS, expected.length);
      pedelecCpu.push(cpuBetween(before, cpuSnapshot(environment, corePid)));
      checkText("Pedelec", pedelec, expected);
      pedelecRuns.push(pedelec);

      const pipe = await pipeTurn(MANY_DELTAS, DELTAS, expected.length);
      checkText("pipe", pipe, expected);
      pipeRuns.push(pipe);

      for (let turn = 0; turn < SHORT_TURNS; turn += 1) {
        const short = await pageTurn(page, ONE_DELTA, single.length);
        checkText("Pedelec 1-delta turn", short, single);
        pedelecShort.push(short.firstMs);
        const pipeSingle = await pipeTurn(ONE_DELTA, 1, single.length);
        checkText("pipe 1-delta turn", pipeSingle, single);
        pipeShort.push(pipeSingle.firstMs);
      }

      console.log(
        `round ${round}: Pedelec ${rate(streamed(pedelec))} (first → last ${ms(pedelec.lastMs - pedelec.firstMs)}, ` +
          `send → first ${ms(pedelec.firstMs)}, send → last ${ms(pedelec.lastMs)}, ${pedelec.events} chat-delta events), ` +
          `pipe ${rate(streamed(pipe))} (first → last ${ms(pipe.lastMs - pipe.firstMs)}, spawn → first ${ms(pipe.firstMs)}, ` +
          `spawn → last ${ms(pipe.lastMs)})`,
      );
    }

    const streamedRate = (runs: TurnTiming[]) => median(runs.map((run) => perSecond(DELTAS - 1, run.lastMs - run.firstMs)));
    const overallRate = (runs: TurnTiming[]) => median(runs.map((run) => perSecond(DELTAS, run.lastMs)));
    const pedelecRate = streamedRate(pedelecRuns);
    const pipeRate = streamedRate(pipeRuns);
    console.log(
      `\n${DELTAS} deltas per turn, ${ROUNDS} rounds interleaved after ${WARM_UP_TURNS} warm-up turns each, medians; every turn's text exact and in order; load average now ${load()}`,
    );
    console.log(
      `  deltas/s, first → last delta: Pedelec ${rate(pedelecRate)}, pipe ${rate(pipeRate)}, ratio ${(pedelecRate / pipeRate).toFixed(2)}× (goal ≥ 0.8×)`,
    );
    console.log(
      `  deltas/s, send → last delta:  Pedelec ${rate(overallRate(pedelecRuns))}, pipe ${rate(overallRate(pipeRuns))}, ` +
        `ratio ${(overallRate(pedelecRuns) / overallRate(pipeRuns)).toFixed(2)}×`,
    );
    console.log(`  chat-delta events the page received per turn: ${median(pedelecRuns.map((run) => run.events))} for ${DELTAS} stand-in deltas`);
    console.log(
      `  first-delta latency, ${DELTAS}-delta turn: Pedelec (sendText → first delta) ${ms(median(pedelecRuns.map((run) => run.firstMs)))}, ` +
        `pipe (spawn → first delta) ${ms(median(pipeRuns.map((run) => run.firstMs)))}`,
    );
    const shortPedelec = latencySummary(pedelecShort);
    const shortPipe = latencySummary(pipeShort);
    console.log(
      `  first-delta latency, 1-delta turn (${pedelecShort.length} turns each): Pedelec median ${ms(shortPedelec.median)}, p95 ${ms(shortPedelec.p95)}; ` +
        `pipe median ${ms(shortPipe.median)}, p95 ${ms(shortPipe.p95)}`,
    );

    console.log(`\nCPU seconds per ${DELTAS}-delta Pedelec turn (median of ${ROUNDS}; ps-style /proc times, 10 ms ticks)`);
    const groupSeconds = CPU_GROUPS.map((group) => [group, median(pedelecCpu.map((spent) => spent.get(group) ?? 0))] as const);
    const total = groupSeconds.reduce((sum, [, seconds]) => sum + seconds, 0);
    const chromium = groupSeconds.filter(([group]) => group.startsWith("Chromium")).reduce((sum, [, seconds]) => sum + seconds, 0);
    for (const [group, seconds] of groupSeconds) {
      console.log(`  ${group.padEnd(46)} ${seconds.toFixed(2)} s  ${((100 * seconds) / total).toFixed(0).padStart(3)}%`);
    }
    console.log(`  ${"Chromium, all processes".padEnd(46)} ${chromium.toFixed(2)} s  ${((100 * chromium) / total).toFixed(0).padStart(3)}%`);
    console.log(`  ${"total".padEnd(46)} ${total.toFixed(2)} s over a median ${ms(median(pedelecRuns.map((run) => run.lastMs)))} turn`);
    console.log(
      `  pipe baseline per turn: reader ${median(pipeRuns.map((run) => run.readerSeconds)).toFixed(2)} s, ` +
        `stand-in ${median(pipeRuns.map((run) => run.standInSeconds)).toFixed(2)} s`,
    );

    // One chat-delta event as each hop receives it; the extension's service worker runs zod without code generation
    // (its CSP forbids eval), which `jitless` reproduces here.
    const envelope = {
      type: "event",
      sessionId: "3f0b2a4e-6a43-4bd4-9c1e-5d1e2f3a4b5c",
      seq: 4711,
      emittedAt: new Date().toISOString(),
      event: { type: "chat-delta", turnId: "turn-3f0b2a4e", messageId: "msg_0123456789abcdef01234567", delta: "4711 " },
    };
    const frame = { kind: "event", envelope };
    const host = parseMicroseconds(() => coreServerFrameSchema.safeParse(frame));
    const extension = parseMicroseconds(() => hostToExtensionMessageSchema.safeParse(frame, { jitless: true }));
    const pageSide = parseMicroseconds(() => extensionToPageMessageSchema.safeParse(envelope));
    // The same frames chosen by `kind` first, so an event meets the event schema only, not both response shapes before it.
    const responseByOk = z.discriminatedUnion("ok", coreResponseFrameSchema.options);
    const hostByKind = z.discriminatedUnion("kind", [responseByOk, coreEventFrameSchema, coreFatalFrameSchema, runOutputFrameSchema]);
    const extensionByKind = z.discriminatedUnion("kind", [
      responseByOk,
      coreEventFrameSchema,
      coreFatalFrameSchema,
      hostStatusFrameSchema,
      chunkFrameSchema,
    ]);
    const hostKeyed = parseMicroseconds(() => hostByKind.safeParse(frame));
    const extensionKeyed = parseMicroseconds(() => extensionByKind.safeParse(frame, { jitless: true }));
    const perTurn = (microseconds: number) => `${((microseconds * DELTAS) / 1000).toFixed(0)} ms per ${DELTAS} events`;
    console.log(`\nzod, one chat-delta event per hop (this Node's V8; one safeParse per hop)`);
    console.log(`  native host, Core frame (core-client.ts):    ${host.toFixed(1)} µs, ${perTurn(host)}; chosen by kind ${hostKeyed.toFixed(1)} µs`);
    console.log(
      `  extension, native message (native-link.ts):  ${extension.toFixed(1)} µs without code generation, ${perTurn(extension)}; ` +
        `chosen by kind ${extensionKeyed.toFixed(1)} µs`,
    );
    console.log(`  page, port message (bridge.ts):              ${pageSide.toFixed(1)} µs, ${perTurn(pageSide)} (the event schema is tried first)`);

    expect(pedelecRuns).toHaveLength(ROUNDS);
  } finally {
    await environment.close();
  }
});
