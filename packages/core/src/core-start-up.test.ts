import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runStartUp, undoneOnFailure, type StartedStep } from "./core-start-up.js";
import type { LogRecord, LogSink } from "./logging/log-record.js";
import { setLogSink } from "./logger.js";

let logged: LogRecord[];
let previousSink: LogSink;

beforeEach(() => {
  logged = [];
  previousSink = setLogSink({ write: (record) => logged.push(record) });
});
afterEach(() => {
  setLogSink(previousSink);
});

/** A step that records that it ran, and its undo. */
function recordedStep(name: string, journal: string[]): (input: string) => StartedStep<string> {
  return (input) => {
    journal.push(`${name}(${input})`);
    return { made: `${name}-made`, undo: () => void journal.push(`undo ${name}`) };
  };
}

describe("runStartUp", () => {
  it("runs the steps in order, each on what the one before made, and undoes nothing once the plan returns", async () => {
    const journal: string[] = [];
    const result = await runStartUp(undefined, async (startUp) => {
      const first = await startUp.step(recordedStep("first", journal), "input");
      const second = await startUp.step(recordedStep("second", journal), first);
      return startUp.step(recordedStep("third", journal), second);
    });
    expect(result).toBe("third-made");
    expect(journal).toEqual(["first(input)", "second(first-made)", "third(second-made)"]);
  });

  it("undoes the steps that finished, last first, when a step throws, and throws its error on", async () => {
    const journal: string[] = [];
    const failure = new Error("the socket is taken");
    const started = runStartUp(undefined, async (startUp) => {
      await startUp.step(recordedStep("first", journal), "input");
      await startUp.step((input: string) => ({ made: input }), "no undo");
      await startUp.step(recordedStep("second", journal), "input");
      await startUp.step(() => Promise.reject(failure), undefined);
      journal.push("after the failure");
    });
    await expect(started).rejects.toBe(failure);
    expect(journal).toEqual(["first(input)", "second(input)", "undo second", "undo first"]);
  });

  it("runs every undo even when one of them fails", async () => {
    const journal: string[] = [];
    const started = runStartUp(undefined, async (startUp) => {
      await startUp.step(recordedStep("first", journal), "input");
      await startUp.step(
        () => ({
          made: undefined,
          undo: () => {
            journal.push("undo failing");
            throw new Error("already gone");
          },
        }),
        undefined,
      );
      throw new Error("later failure");
    });
    await expect(started).rejects.toThrow("later failure");
    expect(journal).toEqual(["first(input)", "undo failing", "undo first"]);
  });

  it("starts nothing when the signal has already stopped start-up, and throws the signal's reason", async () => {
    const stopping = new AbortController();
    const reason = new Error("asked to stop");
    stopping.abort(reason);
    const journal: string[] = [];
    await expect(runStartUp(stopping.signal, (startUp) => startUp.step(recordedStep("first", journal), "input"))).rejects.toBe(reason);
    expect(journal).toEqual([]);
    expect(logged.map((record) => record.message)).toEqual(["Core start-up stopped"]);
  });

  it("undoes what was set up when the signal stops start-up between steps, and runs no later step", async () => {
    const stopping = new AbortController();
    const reason = new Error("asked to stop");
    const journal: string[] = [];
    const started = runStartUp(stopping.signal, async (startUp) => {
      await startUp.step(recordedStep("first", journal), "input");
      await startUp.step((input: string) => {
        journal.push("second");
        stopping.abort(reason);
        return { made: input, undo: () => void journal.push("undo second") };
      }, "input");
      await startUp.step(recordedStep("third", journal), "input");
    });
    await expect(started).rejects.toBe(reason);
    expect(journal).toEqual(["first(input)", "second", "undo second", "undo first"]);
    expect(logged.map((record) => record.message)).toEqual(["Core start-up stopped"]);
  });
});

describe("undoneOnFailure", () => {
  it("returns what the rest made with the undo, not running it", async () => {
    const journal: string[] = [];
    const step = await undoneOnFailure(
      () => void journal.push("undo"),
      () => "made",
    );
    expect(step.made).toBe("made");
    expect(journal).toEqual([]);
    await step.undo?.();
    expect(journal).toEqual(["undo"]);
  });

  it("runs the undo when the rest throws, then throws the rest's error on", async () => {
    const journal: string[] = [];
    const failure = new Error("chmod failed");
    const step = undoneOnFailure(
      () => void journal.push("undo"),
      () => {
        throw failure;
      },
    );
    await expect(step).rejects.toBe(failure);
    expect(journal).toEqual(["undo"]);
  });
});
