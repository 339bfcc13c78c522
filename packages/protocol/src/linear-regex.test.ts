import { describe, expect, it } from "vitest";
import {
  compileLinearPattern,
  findUnsupportedPattern,
  linearRegExp,
  MAX_PATTERN_LENGTH,
  PATTERN_CACHE_UNITS,
  PATTERN_COMPILE_BUDGET,
  PATTERN_MATCH_BUDGET,
  type LinearPattern,
} from "./linear-regex.js";

function compiled(source: string): LinearPattern {
  const result = compileLinearPattern(source);
  if (!result.ok) throw new Error(`expected ${source} to compile: ${result.reason}`);
  return result.pattern;
}

function refusal(source: string): string {
  const result = compileLinearPattern(source);
  if (result.ok) throw new Error(`expected ${source} to be refused`);
  return result.reason;
}

function millisecondsOf(run: () => void): number {
  const started = performance.now();
  run();
  return performance.now() - started;
}

/** The next turn of the event loop, when the matching budget is fresh again. */
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe("compileLinearPattern", () => {
  it("answers the catastrophic-backtracking pattern at once, in time linear in the input", async () => {
    const evil = compiled("^(a+)+$");
    // A backtracking engine needs about 2^n steps here: n = 32 is minutes of CPU.
    expect(millisecondsOf(() => expect(evil.test(`${"a".repeat(32)}!`)).toBe(false))).toBeLessThan(1_000);

    // Against a long input, the nested quantifier costs about what a plain `^a+$` does (the baseline, same run).
    const benign = compiled("^a+$");
    const input = `${"a".repeat(200_000)}!`;
    for (const warmUp of [benign, evil]) warmUp.test("a".repeat(1_000));
    await nextTurn();
    const baseline = millisecondsOf(() => expect(benign.test(input)).toBe(false));
    await nextTurn();
    const nested = millisecondsOf(() => expect(evil.test(input)).toBe(false));
    expect(nested / Math.max(baseline, 1)).toBeLessThan(20);
  });

  it("searches like JSON Schema: unanchored unless the pattern anchors itself", () => {
    expect(compiled("b").test("abc")).toBe(true);
    expect(compiled("^b").test("abc")).toBe(false);
    expect(compiled("c$").test("abc")).toBe(true);
    expect(compiled("^[a-z]+$").test("abc")).toBe(true);
    expect(compiled("^[a-z]+$").test("ab1")).toBe(false);
    expect(compiled("").test("anything")).toBe(true);
  });

  it("reads ECMAScript syntax: \\u escapes, code points, Unicode classes, named groups, escaped backslashes", () => {
    expect(compiled("^[\\u4e00-\\u9fff]+$").test("中文")).toBe(true);
    expect(compiled("^[\\u4e00-\\u9fff]+$").test("abc")).toBe(false);
    expect(compiled("^.$").test("😀")).toBe(true);
    expect(compiled("^\\u{1F600}$").test("😀")).toBe(true);
    expect(compiled("^\\p{L}+$").test("Ünïcødé")).toBe(true);
    expect(compiled("^(?<year>\\d{4})-\\d{2}$").test("2024-05")).toBe(true);
    expect(compiled("^\\\\1$").test("\\1")).toBe(true);
    // Inside a class, "(?=" is three plain characters.
    expect(compiled("^[(?=]+$").test("(?=")).toBe(true);
  });

  it.each([
    ["(a)\\1", /^back-references need a backtracking engine/],
    ["(?<n>a)\\k<n>", /^back-references need a backtracking engine/],
    ["a(?=b)", /^look-ahead assertions/],
    ["a(?!b)", /^look-ahead assertions/],
    ["(?<=a)b", /^look-behind assertions/],
    ["(?<!a)b", /^look-behind assertions/],
    ["(", /^it is not a valid regular expression/],
    ["a{2,1}", /^it is not a valid regular expression/],
    ["a{1001}", /^the linear-time engine \(RE2\) refuses it: .*repeat count/],
    ["\\p{L}{1000}".repeat(11), /^it compiles to \d+ instructions, more than the 10000 allowed/],
    ["a".repeat(MAX_PATTERN_LENGTH + 1), /^it is longer than 1000 characters/],
  ])("refuses %s", (source, reason) => {
    expect(refusal(source)).toMatch(reason);
  });
});

describe("findUnsupportedPattern", () => {
  it("names the first refused entry", () => {
    const entries = [
      { where: "a", pattern: "^ok$" },
      { where: "b", pattern: "(x)\\1" },
      { where: "c", pattern: "(?=y)" },
    ];
    expect(findUnsupportedPattern(entries)).toEqual({ entry: entries[1], reason: expect.stringMatching(/^back-references/) as string });
    expect(findUnsupportedPattern(entries.slice(0, 1))).toBeNull();
  });

  it("compiles a pattern once while it is among the recently used, within a bound on the instructions kept", () => {
    const first = compiled("^[a-z0-9-]{1,40}$");
    expect(compiled("^[a-z0-9-]{1,40}$")).toBe(first);
    expect(compileLinearPattern("(x)\\1")).toBe(compileLinearPattern("(x)\\1"));
    // Each about 1000 instructions: more of them than the cache holds push the least recently used out.
    const large = (index: number): string => `\\p{L}{1000}${index}`;
    const count = Math.ceil((PATTERN_CACHE_UNITS * 1.5) / 1000);
    const held = Array.from({ length: count }, (_, index) => compiled(large(index)));
    expect(held[0]!.programSize).toBeGreaterThan(1000);
    expect(compiled(large(count - 1))).toBe(held[count - 1]);
    expect(compiled(large(0))).not.toBe(held[0]);
    expect(compiled("^[a-z0-9-]{1,40}$")).not.toBe(first);
    expect(compiled("^[a-z0-9-]{1,40}$").test("ok-1")).toBe(true);
  });

  it("counts a refused pattern by its length, so a flood of long refused patterns cannot grow the cache", () => {
    const kept = compiled("^kept$");
    expect(compiled("^kept$")).toBe(kept);
    // Refused (a back-reference), each just under the length limit: together far more than the cache holds.
    const refusedSources = Array.from(
      { length: Math.ceil((PATTERN_CACHE_UNITS * 2) / MAX_PATTERN_LENGTH) },
      (_, index) => `(a)\\1${String(index).padStart(MAX_PATTERN_LENGTH - 6, "x")}`,
    );
    for (const source of refusedSources) expect(refusal(source)).toMatch(/^back-references/);
    expect(compiled("^kept$")).not.toBe(kept);
    // Over the limit: refused every time, never kept.
    const tooLong = "a".repeat(MAX_PATTERN_LENGTH + 1);
    expect(compileLinearPattern(tooLong)).not.toBe(compileLinearPattern(tooLong));
  });

  it("bounds the compile work of all patterns together", () => {
    // Each about 1000 instructions: fine alone, too much together.
    const entries = Array.from({ length: 60 }, (_, index) => ({ index, pattern: `\\p{L}{1000}${index}` }));
    const refused = findUnsupportedPattern(entries);
    expect(refused?.reason).toMatch(new RegExp(`more than ${PATTERN_COMPILE_BUDGET} units of compile work`));
    expect(refused?.entry.index).toBeGreaterThan(40);
    expect(refused?.entry.index).toBeLessThan(55);
  });
});

describe("linearRegExp (Ajv's regExp engine)", () => {
  it("compiles with Ajv's flags and gives each pattern its own key", () => {
    expect(linearRegExp("^a", "u").test("ab")).toBe(true);
    expect(linearRegExp("^a", "").test("ba")).toBe(false);
    expect(String(linearRegExp("^a", "u"))).not.toBe(String(linearRegExp("^b", "u")));
    expect(linearRegExp.code).toContain("@pedelec/protocol/linear-regex");
  });

  it("throws INVALID_INPUT naming the pattern and the reason", () => {
    expect(() => linearRegExp("(a)\\1", "u")).toThrowError(
      expect.objectContaining({
        code: "INVALID_INPUT",
        message: expect.stringMatching(/^pattern "\(a\)\\\\1" is not supported: back-references/) as string,
      }) as Error,
    );
    expect(() => linearRegExp("a", "g")).toThrowError(expect.objectContaining({ code: "INVALID_INPUT" }) as Error);
  });
});

describe("the matching budget", () => {
  it("refuses one value too long for the pattern's size, saying how long it may be", async () => {
    await nextTurn();
    const pattern = compiled("^[a-z]+$");
    const longest = Math.floor(PATTERN_MATCH_BUDGET / pattern.programSize) - 1;
    expect(pattern.test("a".repeat(longest))).toBe(true);
    await nextTurn();
    expect(() => pattern.test("a".repeat(longest + 1))).toThrowError(
      expect.objectContaining({ code: "TOOL_ARGS_INVALID", message: expect.stringContaining(`at most ${longest} characters`) as string }) as Error,
    );
  });

  it("bounds the work of one event-loop turn, and is fresh again in the next", async () => {
    await nextTurn();
    const pattern = compiled("^[a-z]+$");
    const value = "a".repeat(Math.floor(PATTERN_MATCH_BUDGET / pattern.programSize / 4));
    const checkMany = () => {
      for (let index = 0; index < 5; index += 1) pattern.test(value);
    };
    expect(checkMany).toThrowError(
      expect.objectContaining({ code: "TOOL_ARGS_INVALID", message: expect.stringContaining("too much text") as string }) as Error,
    );
    await nextTurn();
    expect(pattern.test(value)).toBe(true);
  });
});
