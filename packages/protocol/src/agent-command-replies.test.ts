import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { checkToolCallResult, readCoreReplyFrame } from "./agent-command-replies.js";
import { coreServerFrameSchema } from "./core-wire.js";
import { localRequestSchemas } from "./requests.js";
import { deepValue, fuzzSettings, fuzzString, jsonValue } from "./testing/fuzz-values.js";

const settings = fuzzSettings(process.env, 5_000);

const absent = Symbol("absent");
/** An object from optional fields: a field whose value is `absent` is left out. */
const record = (fields: Record<string, fc.Arbitrary<unknown>>) =>
  fc.record(fields).map((value) => Object.fromEntries(Object.entries(value).filter(([, field]) => field !== absent)));

/** Mostly the valid choice, now and then one of the broken ones, so both sides of the line are well covered. */
const mostly = <T>(valid: fc.Arbitrary<T>, broken: fc.Arbitrary<unknown>) =>
  fc.oneof({ arbitrary: valid, weight: 6 }, { arbitrary: broken, weight: 1 });

const wireError = mostly(
  record({
    code: mostly(fc.constantFrom("SESSION_BUSY", "TOOL_TIMEOUT"), fc.constantFrom("NOT_A_CODE", "", absent)),
    message: mostly(fuzzString, fc.constantFrom(3, null, absent)),
    details: fc.oneof(jsonValue, fc.constant(absent)),
    extra: fc.oneof(fc.constant(absent), jsonValue),
  }),
  fc.constantFrom(null, [], "SESSION_BUSY", absent),
);

/** Frames near the shape of a response or a fatal frame, valid or broken in one or more places. */
const frame = mostly(
  record({
    kind: mostly(fc.constantFrom("response", "fatal"), fc.constantFrom("event", "run-output", "Response", 1, absent)),
    id: mostly(
      fuzzString.filter((id) => id.length >= 1 && id.length <= 128),
      fc.constantFrom("", "x".repeat(128), "x".repeat(129), 7, null, absent),
    ),
    ok: mostly(fc.boolean(), fc.constantFrom("true", 1, null, absent)),
    result: mostly(jsonValue, fc.constant(absent)),
    error: wireError,
    extra: fc.oneof(fc.constant(absent), jsonValue),
  }),
  jsonValue,
);

describe("readCoreReplyFrame", () => {
  it(`accepts exactly the responses and fatal frames coreServerFrameSchema accepts (seed ${settings.seed})`, () => {
    let accepted = 0;
    for (const candidate of fc.sample(frame, { seed: settings.seed, numRuns: settings.runs })) {
      const read = readCoreReplyFrame(candidate);
      const parsed = coreServerFrameSchema.safeParse(candidate);
      expect(read.kind !== "malformed", JSON.stringify(candidate)).toBe(parsed.success);
      if (!parsed.success || read.kind === "malformed") continue;
      accepted += 1;
      expect(read.kind === "reply" ? read.message : read.message).toEqual(parsed.data);
    }
    // The generator must reach both sides of the line for the comparison to mean anything.
    expect(accepted).toBeGreaterThan(settings.runs / 10);
    expect(accepted).toBeLessThan(settings.runs * 0.9);
  });

  it("turns an error response into the caller's error and names the request a broken response answers", () => {
    const read = readCoreReplyFrame({ kind: "response", id: "r1", ok: false, error: { code: "TOOL_TIMEOUT", message: "no answer" } });
    expect(read).toMatchObject({ kind: "reply", id: "r1", outcome: { ok: false, error: { name: "PedelecError", code: "TOOL_TIMEOUT" } } });
    expect(readCoreReplyFrame({ kind: "response", id: "r1", ok: "yes" })).toMatchObject({
      kind: "malformed",
      id: "r1",
      error: { code: "SDK_PROTOCOL_ERROR" },
    });
    expect(readCoreReplyFrame({ kind: "event", envelope: {} })).toMatchObject({ kind: "malformed", id: undefined });
  });
});

describe("checkToolCallResult", () => {
  it(`accepts exactly what the toolCall result schema accepts (seed ${settings.seed})`, () => {
    const candidates = fc.oneof(
      record({
        result: fc.oneof(jsonValue, deepValue, fc.constant(absent), fc.constant(undefined)),
        extra: fc.oneof(fc.constant(absent), jsonValue),
      }),
      jsonValue,
    );
    for (const candidate of fc.sample(candidates, { seed: settings.seed, numRuns: settings.runs })) {
      const expected = localRequestSchemas.toolCall.result.safeParse(candidate).success;
      let accepted = true;
      try {
        checkToolCallResult(candidate);
      } catch (error) {
        accepted = false;
        expect(error).toMatchObject({ code: "SDK_PROTOCOL_ERROR" });
      }
      expect(accepted, JSON.stringify(candidate)).toBe(expected);
    }
  });
});
