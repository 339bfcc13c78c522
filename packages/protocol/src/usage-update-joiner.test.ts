import { describe, expect, it } from "vitest";
import type { UsageUpdate } from "./session-usage.js";
import { UsageUpdateJoiner } from "./usage-update-joiner.js";

function joiner() {
  const sent: UsageUpdate[] = [];
  const pending: Array<() => void> = [];
  const updates = new UsageUpdateJoiner({ send: (update) => sent.push(update), later: (callback) => pending.push(callback) });
  /** Closes the open window (running what it scheduled), like one display frame passing. */
  const frame = (): void => {
    const due = pending.splice(0);
    for (const callback of due) callback();
  };
  return { updates, sent, frame, pending };
}

const update = (turnId: string, outputTokens: number): UsageUpdate => ({
  turnId,
  usage: { outputTokens },
  sessionUsage: { outputTokens: outputTokens + 100 },
});

describe("UsageUpdateJoiner", () => {
  it("sends the first update at once and only the newest of those within the window when it closes", () => {
    const { updates, sent, frame } = joiner();
    for (let tokens = 1; tokens <= 10_000; tokens += 1) updates.push(update("t", tokens));
    expect(sent).toEqual([update("t", 1)]);
    frame();
    expect(sent).toEqual([update("t", 1), update("t", 10_000)]);
    frame();
    expect(sent).toHaveLength(2);
  });

  it("sends at most one update per window while the reports keep coming", () => {
    const { updates, sent, frame } = joiner();
    for (let window = 0; window < 50; window += 1) {
      for (let tokens = 1; tokens <= 20; tokens += 1) updates.push(update("t", window * 20 + tokens));
      frame();
    }
    // The first went at once; each of the 50 windows closed with its newest.
    expect(sent).toHaveLength(51);
    expect(sent.at(-1)).toEqual(update("t", 1_000));
  });

  it("sends the waiting update on flush(), keeps another turn's last update, and drops the waiting one on discard()", () => {
    const { updates, sent, frame } = joiner();
    updates.push(update("t1", 1));
    updates.push(update("t1", 2));
    updates.push(update("t2", 3));
    updates.flush();
    expect(sent.map((each) => `${each.turnId}:${each.usage.outputTokens}`)).toEqual(["t1:1", "t1:2", "t2:3"]);
    updates.push(update("t2", 4));
    updates.discard();
    frame();
    frame();
    expect(sent).toHaveLength(3);
    // Once the window closed with nothing waiting, the next update goes at once again.
    updates.push(update("t2", 5));
    expect(sent.at(-1)).toEqual(update("t2", 5));
  });
});
