import { RE2JS } from "re2js";
import { PedelecError } from "./pedelec-error.js";

/*
 * Patterns in a tool's argsSchema come from web pages, and Core checks the agent's arguments against them on its only
 * thread. A backtracking engine (JavaScript's RegExp) can take exponential time (`^(a+)+$` against "aaa…a!"), so
 * page patterns run under RE2 (re2js, pure JavaScript, so the SDK can apply the same rule in the browser): time
 * linear in the input, and no constructs that need backtracking (back-references, look-around). Linear is not free,
 * so compiling and matching are bounded too.
 */

/** Longest pattern accepted, in characters. */
export const MAX_PATTERN_LENGTH = 1000;
/** Largest compiled program one pattern may have, in RE2 instructions (`\p{L}{1000}` alone is about 1000). */
export const MAX_PATTERN_PROGRAM_SIZE = 10_000;
/** Compile work (characters plus instructions) all patterns of one skills manifest may take together. */
export const PATTERN_COMPILE_BUDGET = 50_000;
/**
 * Matching work (instructions × characters) spent on patterns in one event-loop turn; about 0.1–0.4 s of one core
 * in the worst case. Validating one tool call's arguments happens within one turn.
 */
export const PATTERN_MATCH_BUDGET = 4_000_000;

/** A page pattern compiled for the linear-time engine; its `test` is what Ajv calls. */
export interface LinearPattern {
  /** The pattern as the page wrote it (ECMAScript syntax). */
  readonly source: string;
  /** Instructions of the compiled program: matching costs about this much per input character. */
  readonly programSize: number;
  /** JSON Schema semantics: true when the pattern matches anywhere in `input` (a search, not anchored). */
  test(input: string): boolean;
  /** Ajv shares compiled patterns by this key. */
  toString(): string;
}

export type LinearPatternResult = { ok: true; pattern: LinearPattern } | { ok: false; reason: string };

/**
 * Compiled patterns, by source, most recently used last: pages declare the same tools session after session, and the
 * pattern check runs at each edge the manifest crosses. The result is a pure function of the source, and a compiled
 * program can serve any number of matches. Bounded by what it holds, the sources (refused ones too) and the compiled
 * instructions, so neither large patterns nor a flood of refused ones can pile up.
 */
const compiledPatterns = new Map<string, LinearPatternResult>();
let cachedUnits = 0;
/** What the cache may hold, in characters of source plus compiled instructions (a few MiB at most). */
export const PATTERN_CACHE_UNITS = 100_000;

const unitsOf = (source: string, result: LinearPatternResult): number => source.length + (result.ok ? result.pattern.programSize : 0);

/** Compiles a page's pattern, or says why it cannot run in linear time within the limits. */
export function compileLinearPattern(source: string): LinearPatternResult {
  const cached = compiledPatterns.get(source);
  if (cached !== undefined) {
    compiledPatterns.delete(source);
    compiledPatterns.set(source, cached);
    return cached;
  }
  const result = compilePattern(source);
  // Longer than any accepted pattern: refused on sight, and not worth keeping.
  if (source.length > MAX_PATTERN_LENGTH) return result;
  compiledPatterns.set(source, result);
  cachedUnits += unitsOf(source, result);
  for (const [oldest, held] of compiledPatterns) {
    if (cachedUnits <= PATTERN_CACHE_UNITS) break;
    compiledPatterns.delete(oldest);
    cachedUnits -= unitsOf(oldest, held);
  }
  return result;
}

function compilePattern(source: string): LinearPatternResult {
  if (source.length > MAX_PATTERN_LENGTH) {
    return { ok: false, reason: `it is longer than ${MAX_PATTERN_LENGTH} characters` };
  }
  try {
    // JSON Schema patterns are ECMAScript regular expressions; this only parses it, nothing is matched.
    new RegExp(source, "u");
  } catch (error) {
    return { ok: false, reason: `it is not a valid regular expression (${(error as Error).message})` };
  }
  const backtracking = backtrackingConstruct(source);
  if (backtracking !== null) return { ok: false, reason: `${backtracking} need a backtracking engine, which could stall Core` };
  let program: RE2JS;
  try {
    program = RE2JS.compile(RE2JS.translateRegExp(source));
  } catch (error) {
    return { ok: false, reason: `the linear-time engine (RE2) refuses it: ${(error as Error).message}` };
  }
  const programSize = program.programSize();
  if (programSize > MAX_PATTERN_PROGRAM_SIZE) {
    return {
      ok: false,
      reason: `it compiles to ${programSize} instructions, more than the ${MAX_PATTERN_PROGRAM_SIZE} allowed (large repeat counts multiply)`,
    };
  }
  return {
    ok: true,
    pattern: {
      source,
      programSize,
      test: (input) => {
        spendMatchWork(programSize, input.length, source);
        return program.test(input);
      },
      toString: () => `/${source}/u`,
    },
  };
}

/**
 * The first entry whose pattern is refused, with the reason; compile work across all entries is bounded by
 * PATTERN_COMPILE_BUDGET, so checking stops there too.
 */
export function findUnsupportedPattern<T extends { pattern: string }>(entries: Iterable<T>): { entry: T; reason: string } | null {
  let spent = 0;
  for (const entry of entries) {
    const compiled = compileLinearPattern(entry.pattern);
    if (!compiled.ok) return { entry, reason: compiled.reason };
    spent += entry.pattern.length + compiled.pattern.programSize;
    if (spent > PATTERN_COMPILE_BUDGET) {
      return {
        entry,
        reason: `with it, the patterns of this session take more than ${PATTERN_COMPILE_BUDGET} units of compile work (characters plus compiled instructions)`,
      };
    }
  }
  return null;
}

/**
 * Ajv's `code.regExp` engine: `new Ajv({ code: { regExp: linearRegExp } })`. Throws INVALID_INPUT for a pattern the
 * rule refuses; a match that would exceed the matching budget throws TOOL_ARGS_INVALID.
 */
export const linearRegExp = Object.assign(
  (source: string, flags: string): LinearPattern => {
    if (flags !== "" && flags !== "u") throw new PedelecError("INVALID_INPUT", `pattern flags "${flags}" are not supported`);
    const compiled = compileLinearPattern(source);
    if (!compiled.ok) {
      throw new PedelecError("INVALID_INPUT", `pattern ${JSON.stringify(source)} is not supported: ${compiled.reason}`, {
        pattern: source,
        reason: compiled.reason,
      });
    }
    return compiled.pattern;
  },
  // Ajv's standalone code generation names the engine this way; Core compiles at run time and never uses it.
  { code: 'require("@pedelec/protocol/linear-regex").linearRegExp' },
);

let matchWorkThisTurn = 0;
let resetQueued = false;

function spendMatchWork(programSize: number, inputLength: number, source: string): void {
  const work = programSize * (inputLength + 1);
  if (work > PATTERN_MATCH_BUDGET) {
    const longest = Math.floor(PATTERN_MATCH_BUDGET / programSize) - 1;
    throw new PedelecError(
      "TOOL_ARGS_INVALID",
      `a value of ${inputLength} characters is too long to check against pattern ${JSON.stringify(source)} (at most ${longest} characters)`,
    );
  }
  if (matchWorkThisTurn + work > PATTERN_MATCH_BUDGET) {
    throw new PedelecError("TOOL_ARGS_INVALID", "the arguments hold too much text to check against the tool's patterns at once");
  }
  matchWorkThisTurn += work;
  if (!resetQueued) {
    resetQueued = true;
    // Microtasks run once the current synchronous run ends: the budget is per turn of the event loop.
    queueMicrotask(() => {
      matchWorkThisTurn = 0;
      resetQueued = false;
    });
  }
}

/**
 * Names the back-references or look-around assertions in an ECMAScript pattern (already known to be valid with the
 * `u` flag), or null. Checked before translation because RE2's translation would turn `\k<name>` into plain text.
 */
function backtrackingConstruct(source: string): string | null {
  let inClass = false;
  for (let index = 0; index < source.length; index += 1) {
    const char = source[index];
    if (char === "\\") {
      const next = source[index + 1] ?? "";
      // With the u flag, `\k` and `\1`–`\9` are only valid as back-references (never inside a class).
      if (next === "k" || (next >= "1" && next <= "9")) return "back-references";
      index += 1;
    } else if (inClass) {
      if (char === "]") inClass = false;
    } else if (char === "[") {
      inClass = true;
    } else if (char === "(" && source[index + 1] === "?") {
      const kind = source.slice(index + 2, index + 4);
      if (kind.startsWith("=") || kind.startsWith("!")) return "look-ahead assertions";
      if (kind === "<=" || kind === "<!") return "look-behind assertions";
    }
  }
  return null;
}
