import { describe, expect, it } from "vitest";
import { toJsonResult } from "./json-result.js";

describe("toJsonResult", () => {
  it("accepts JSON values and returns a copy", () => {
    const shared = { id: 1 };
    const value = { text: "hi", list: [1, true, null, "x"], nested: { a: shared, b: shared }, empty: {} };
    const checked = toJsonResult(value);
    expect(checked).toEqual({ ok: true, value });
    if (!checked.ok) throw new Error("unreachable");
    expect(checked.value).not.toBe(value);
    shared.id = 2;
    expect((checked.value as { nested: { a: { id: number } } }).nested.a.id).toBe(1);
  });

  it("accepts null-prototype objects and top-level primitives", () => {
    const bare = Object.assign(Object.create(null) as object, { a: 1 });
    expect(toJsonResult(bare)).toEqual({ ok: true, value: { a: 1 } });
    expect(toJsonResult(0)).toEqual({ ok: true, value: 0 });
    expect(toJsonResult(null)).toEqual({ ok: true, value: null });
  });

  it("drops undefined object properties, as JSON does", () => {
    expect(toJsonResult({ a: 1, b: undefined })).toEqual({ ok: true, value: { a: 1 } });
  });

  const cycle: Record<string, unknown> = {};
  cycle.self = cycle;
  class Point {
    x = 1;
  }
  const invalid: Array<[string, unknown, RegExp]> = [
    ["undefined", undefined, /result has type undefined/],
    ["a function", () => 1, /type function/],
    ["a function inside", { nested: { run: () => 1 } }, /result\.nested\.run has type function/],
    ["a BigInt", 10n, /type bigint/],
    ["a symbol", Symbol("s"), /type symbol/],
    ["NaN", Number.NaN, /NaN/],
    ["Infinity", [1, Number.POSITIVE_INFINITY], /result\[1\] is Infinity/],
    ["a cycle", cycle, /cycle/],
    ["a Map", new Map([["a", 1]]), /Map/],
    ["a Date", new Date(0), /Date/],
    ["a class instance", new Point(), /Point/],
    ["undefined in an array", [1, undefined], /result\[1\] has type undefined/],
    // biome-ignore lint/suspicious/noSparseArray: the case under test is a sparse array
    ["a sparse array", [1, , 3], /sparse/],
  ];
  for (const [name, value, reason] of invalid) {
    it(`refuses ${name}`, () => {
      const checked = toJsonResult(value);
      expect(checked.ok).toBe(false);
      if (checked.ok) return;
      expect(checked.reason).toMatch(reason);
    });
  }

  it("accepts exactly what Core accepts: 64 levels and a million values, not one more", () => {
    const nest = (levels: number): unknown => {
      let value: unknown = 1;
      for (let level = 0; level < levels; level += 1) value = [value];
      return value;
    };
    expect(toJsonResult(nest(64)).ok).toBe(true);
    const tooDeep = toJsonResult(nest(65));
    expect(tooDeep).toMatchObject({ ok: false, reason: expect.stringMatching(/nested more than 64 levels/) });
    expect(toJsonResult(new Array(999_999).fill(0)).ok).toBe(true);
    expect(toJsonResult(new Array(1_000_000).fill(0))).toMatchObject({ ok: false, reason: expect.stringMatching(/more than 1000000 values/) });
  });

  it("refuses values nested too deeply instead of overflowing the stack", () => {
    let deep: unknown = 1;
    for (let level = 0; level < 10_000; level += 1) deep = [deep];
    const checked = toJsonResult(deep);
    expect(checked.ok).toBe(false);
    if (!checked.ok) expect(checked.reason).toMatch(/nested more than/);
  });

  it("reports a getter that throws instead of throwing", () => {
    const value = {
      get broken(): never {
        throw new Error("boom");
      },
    };
    const checked = toJsonResult(value);
    expect(checked).toEqual({ ok: false, reason: expect.stringMatching(/boom/) as unknown });
  });

  it("names the label it was given", () => {
    const checked = toJsonResult(undefined, "payload");
    expect(checked.ok).toBe(false);
    if (!checked.ok) expect(checked.reason).toMatch(/^payload/);
  });
});
