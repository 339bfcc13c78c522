import { describe, expect, it } from "vitest";
import { checkJsonLimits, describeJsonPath, JSON_VALUE_LIMITS, MAX_JSON_DEPTH } from "./json-limits.js";

/** `{"a":{"a":…}}` nested `depth` objects deep, built without recursion. */
function nested(depth: number): unknown {
  let value: unknown = "leaf";
  for (let level = 0; level < depth; level += 1) value = { a: value };
  return value;
}

describe("checkJsonLimits", () => {
  it("measures depth as nested containers and counts every value", () => {
    expect(checkJsonLimits(1)).toEqual({ ok: true, depth: 0, nodes: 1 });
    expect(checkJsonLimits({})).toEqual({ ok: true, depth: 1, nodes: 1 });
    expect(checkJsonLimits({ a: [1, { b: null }], c: "x" })).toEqual({ ok: true, depth: 3, nodes: 6 });
  });

  it("accepts exactly MAX_JSON_DEPTH levels and refuses one more, naming where", () => {
    expect(checkJsonLimits(nested(MAX_JSON_DEPTH))).toMatchObject({ ok: true, depth: MAX_JSON_DEPTH });
    const check = checkJsonLimits(nested(MAX_JSON_DEPTH + 1));
    expect(check).toMatchObject({ ok: false, reason: "too-deep", message: `nests deeper than ${MAX_JSON_DEPTH} levels` });
    expect(check.ok === false && check.path).toEqual(Array.from({ length: MAX_JSON_DEPTH }, () => "a"));
  });

  it("walks a value a million levels deep without recursion", () => {
    let value: unknown = [];
    for (let level = 0; level < 1_000_000; level += 1) value = [value];
    const check = checkJsonLimits(value, { maxDepth: 2_000_000, maxNodes: 2_000_000 });
    expect(check).toMatchObject({ ok: true, depth: 1_000_001 });
    expect(checkJsonLimits(value)).toMatchObject({ ok: false, reason: "too-deep" });
  });

  it("stops counting at the node limit without walking the rest", () => {
    const check = checkJsonLimits({ list: new Array(2_000).fill(0) }, { maxDepth: 10, maxNodes: 1_000 });
    expect(check).toMatchObject({ ok: false, reason: "too-many-nodes", path: ["list"], message: "holds more than 1000 values" });
    expect(checkJsonLimits(new Array(999).fill(0), { maxDepth: 10, maxNodes: 1_000 })).toMatchObject({ ok: true, nodes: 1_000 });
  });

  it.each([
    [{ a: [1, Number.NaN] }, ["a", 1], "is a number JSON cannot hold"],
    [{ when: new Date(0) }, ["when"], "is not a plain object"],
    [{ f: () => 1 }, ["f"], "is a function, not JSON"],
    [{ big: 1n }, ["big"], "is a bigint, not JSON"],
    [[undefined], [0], "is undefined, not JSON"],
  ])("refuses what JSON cannot hold: %o", (value, path, message) => {
    expect(checkJsonLimits(value, JSON_VALUE_LIMITS)).toEqual({ ok: false, reason: "not-json", path, message });
  });

  it("never quotes the value in its message", () => {
    const secret = "s3cr3t-".repeat(1000);
    const check = checkJsonLimits({ [secret]: nested(MAX_JSON_DEPTH + 5) });
    expect(check.ok).toBe(false);
    expect(check.ok === false && check.message).not.toContain("s3cr3t");
  });
});

describe("describeJsonPath", () => {
  it("renders keys and indexes", () => {
    expect(describeJsonPath([])).toBe("(root)");
    expect(describeJsonPath(["outcome", "result", "items", 3, "name"])).toBe("outcome.result.items[3].name");
  });

  it("stays short for long keys and deep paths", () => {
    const path = Array.from({ length: 500 }, () => "k".repeat(10_000));
    const text = describeJsonPath(path);
    expect(text.length).toBeLessThan(400);
    expect(text).toContain("(493 more)");
    expect(describeJsonPath(["line\nbreak"])).toBe("line?break");
  });
});
