import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  TOKEN_USAGE_FIELDS,
  addUsage,
  highestUsage,
  reduceSessionUsage,
  sessionUsageState,
  sessionUsageTotal,
  type SessionUsageInput,
  type SessionUsageState,
  type UsageUpdate,
} from "./session-usage.js";
import type { TokenUsage } from "./token-usage.js";
import { sessionEventSchema } from "./session-events.js";

/** Runs the inputs from `state`, keeping every update. */
function run(inputs: readonly SessionUsageInput[], state: SessionUsageState = sessionUsageState()) {
  const updates: UsageUpdate[] = [];
  for (const input of inputs) {
    const step = reduceSessionUsage(state, input);
    state = step.state;
    if (step.update !== undefined) updates.push(step.update);
  }
  return { state, updates, total: sessionUsageTotal(state) };
}

const report = (turnId: string, usage: TokenUsage): SessionUsageInput => ({ type: "reported", turnId, usage });

describe("a session's usage", () => {
  it("replaces the turn's report with each new one and adds turns up", () => {
    const { updates, total } = run([
      report("t1", { inputTokens: 100 }),
      report("t1", { inputTokens: 100, outputTokens: 5 }),
      report("t1", { inputTokens: 120, outputTokens: 9, totalTokens: 129 }),
      report("t2", { inputTokens: 300, cachedInputTokens: 250 }),
      report("t2", { inputTokens: 300, cachedInputTokens: 250, outputTokens: 20 }),
    ]);
    expect(updates.map((update) => [update.turnId, update.usage, update.sessionUsage])).toEqual([
      ["t1", { inputTokens: 100 }, { inputTokens: 100 }],
      ["t1", { inputTokens: 100, outputTokens: 5 }, { inputTokens: 100, outputTokens: 5 }],
      ["t1", { inputTokens: 120, outputTokens: 9, totalTokens: 129 }, { inputTokens: 120, outputTokens: 9, totalTokens: 129 }],
      ["t2", { inputTokens: 300, cachedInputTokens: 250 }, { inputTokens: 420, outputTokens: 9, cachedInputTokens: 250, totalTokens: 129 }],
      [
        "t2",
        { inputTokens: 300, cachedInputTokens: 250, outputTokens: 20 },
        { inputTokens: 420, outputTokens: 29, cachedInputTokens: 250, totalTokens: 129 },
      ],
    ]);
    expect(total).toEqual({ inputTokens: 420, outputTokens: 29, cachedInputTokens: 250, totalTokens: 129 });
  });

  it("ignores a lower count for that field only, and a report that changes nothing sends nothing", () => {
    const { updates, total } = run([
      report("t1", { inputTokens: 100, outputTokens: 50 }),
      report("t1", { inputTokens: 90, outputTokens: 60 }),
      report("t1", { inputTokens: 100, outputTokens: 60 }),
      report("t1", {}),
      report("t1", { outputTokens: 10 }),
    ]);
    expect(updates.map((update) => update.usage)).toEqual([
      { inputTokens: 100, outputTokens: 50 },
      { inputTokens: 100, outputTokens: 60 },
    ]);
    expect(total).toEqual({ inputTokens: 100, outputTokens: 60 });
  });

  it("counts a provider that starts afresh within a turn as a new run whose usage adds to the turn's", () => {
    const { updates, total } = run([
      { type: "run-started", turnId: "t1" },
      report("t1", { inputTokens: 500, outputTokens: 1 }),
      { type: "run-started", turnId: "t1" },
      report("t1", { inputTokens: 800, outputTokens: 40 }),
    ]);
    expect(updates.at(-1)).toEqual({
      turnId: "t1",
      usage: { inputTokens: 1_300, outputTokens: 41 },
      sessionUsage: { inputTokens: 1_300, outputTokens: 41 },
    });
    expect(total).toEqual({ inputTokens: 1_300, outputTokens: 41 });
  });

  it("sends a new turn's first count even when it is 0 and the session's total stays as it was", () => {
    const { updates } = run([report("t3", { outputTokens: 0 }), report("t1", { outputTokens: 0 })]);
    expect(updates).toEqual([
      { turnId: "t3", usage: { outputTokens: 0 }, sessionUsage: { outputTokens: 0 } },
      { turnId: "t1", usage: { outputTokens: 0 }, sessionUsage: { outputTokens: 0 } },
    ]);
  });

  it("goes on from a restored total, as a restarted Core does", () => {
    const { updates } = run(
      [report("t9", { inputTokens: 10, outputTokens: 2 })],
      sessionUsageState({ inputTokens: 1_000, outputTokens: 200, totalTokens: 1_200 }),
    );
    expect(updates).toEqual([
      { turnId: "t9", usage: { inputTokens: 10, outputTokens: 2 }, sessionUsage: { inputTokens: 1_010, outputTokens: 202, totalTokens: 1_200 } },
    ]);
  });

  it("takes only counts the protocol allows, and stops sums at the largest", () => {
    const { updates, total } = run([
      report("t1", { inputTokens: -1, outputTokens: 1.5, totalTokens: Number.NaN, cachedInputTokens: Number.MAX_SAFE_INTEGER + 2 }),
      report("t1", { inputTokens: Number.MAX_SAFE_INTEGER }),
      report("t2", { inputTokens: 7, bogus: 3 } as TokenUsage),
    ]);
    expect(updates.map((update) => update.sessionUsage)).toEqual([
      { inputTokens: Number.MAX_SAFE_INTEGER },
      { inputTokens: Number.MAX_SAFE_INTEGER },
    ]);
    expect(total).toEqual({ inputTokens: Number.MAX_SAFE_INTEGER });
    for (const update of updates) expect(sessionEventSchema.safeParse({ type: "usage-updated", ...update }).success).toBe(true);
    expect(sessionUsageState({ inputTokens: -5, outputTokens: 3 }).settled).toEqual({ outputTokens: 3 });
  });

  it("adds and raises field by field, keeping only fields either side has", () => {
    expect(addUsage({ inputTokens: 1 }, { outputTokens: 2 })).toEqual({ inputTokens: 1, outputTokens: 2 });
    expect(highestUsage({ inputTokens: 5, outputTokens: 1 }, { inputTokens: 3, totalTokens: 9 })).toEqual({
      inputTokens: 5,
      outputTokens: 1,
      totalTokens: 9,
    });
    expect(addUsage({}, {})).toEqual({});
  });
});

describe("a session's usage, for any reports", () => {
  const usage = fc.record(
    { inputTokens: fc.nat(10_000), outputTokens: fc.nat(10_000), cachedInputTokens: fc.nat(10_000), totalTokens: fc.nat(10_000) },
    { requiredKeys: [] },
  );
  const input: fc.Arbitrary<SessionUsageInput> = fc.oneof(
    { weight: 6, arbitrary: fc.record({ type: fc.constant("reported" as const), turnId: fc.constantFrom("t1", "t2", "t3"), usage }) },
    { weight: 1, arbitrary: fc.record({ type: fc.constant("run-started" as const), turnId: fc.constantFrom("t1", "t2", "t3") }) },
  );

  it("is the sum over runs of each run's highest counts, never goes down, and sends an update exactly when the run's counts rose", () => {
    fc.assert(
      fc.property(fc.array(input, { maxLength: 60 }), (inputs) => {
        let state = sessionUsageState();
        // The model: one entry per run (a new run on run-started, or on a report for another turn than the last).
        const runs: { turnId: string; highest: TokenUsage }[] = [];
        for (const step of inputs) {
          const before = sessionUsageTotal(state);
          const next = reduceSessionUsage(state, step);
          state = next.state;
          const lastRun = runs.at(-1);
          if (step.type === "run-started" || lastRun?.turnId !== step.turnId) runs.push({ turnId: step.turnId, highest: {} });
          const current = runs.at(-1)!;
          const runBefore = current.highest;
          if (step.type === "reported") current.highest = highestUsage(current.highest, step.usage);
          const after = sessionUsageTotal(state);
          for (const field of TOKEN_USAGE_FIELDS) expect(after[field] ?? 0).toBeGreaterThanOrEqual(before[field] ?? 0);
          // A run's first count of a field is news even when it is 0 and leaves the total as it was.
          const rose = TOKEN_USAGE_FIELDS.some((field) => current.highest[field] !== runBefore[field]);
          expect(next.update !== undefined).toBe(rose);
          if (TOKEN_USAGE_FIELDS.some((field) => after[field] !== before[field])) expect(next.update).toBeDefined();
          if (next.update !== undefined) {
            expect(next.update.sessionUsage).toEqual(after);
            const turnRuns = [];
            for (let index = runs.length - 1; index >= 0 && runs[index]!.turnId === current.turnId; index -= 1) turnRuns.push(runs[index]!);
            expect(next.update.usage).toEqual(turnRuns.reduce<TokenUsage>((sum, each) => addUsage(sum, each.highest), {}));
          }
        }
        expect(sessionUsageTotal(state)).toEqual(runs.reduce<TokenUsage>((sum, each) => addUsage(sum, each.highest), {}));
      }),
      { numRuns: 300 },
    );
  });
});
