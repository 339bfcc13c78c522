import fc from "fast-check";
import { isErrorCode } from "../error-codes.js";

// Generators shared by the fuzz tests of every receiving edge (page → extension, extension → native host,
// native host → Core, agent CLI → Core). Runtime-neutral on purpose: the callers pass their environment in.

/** How many messages one fuzz test sends, and the seed that replays it. */
export interface FuzzSettings {
  seed: number;
  runs: number;
}

/** Reads `FUZZ_SEED` (replays one run) and `FUZZ_RUNS` (overrides the count) from an environment record. */
export function fuzzSettings(env: Record<string, string | undefined>, defaultRuns = 10_000): FuzzSettings {
  const seedText = env.FUZZ_SEED;
  const runsText = env.FUZZ_RUNS;
  const seed = seedText !== undefined && seedText !== "" ? Number.parseInt(seedText, 10) : Math.floor(Math.random() * 0x7fffffff);
  const runs = runsText !== undefined && runsText !== "" ? Number.parseInt(runsText, 10) : defaultRuns;
  if (!Number.isSafeInteger(seed)) throw new Error(`FUZZ_SEED must be an integer, got ${seedText}`);
  if (!Number.isSafeInteger(runs) || runs < 1) throw new Error(`FUZZ_RUNS must be a positive integer, got ${runsText}`);
  return { seed, runs };
}

/** Lengths just over the limits the schemas set (ids 128, type 64, model 200, paths 4096) and one far over. */
export const OVERSIZE_LENGTHS = [65, 129, 201, 257, 4097, 65_537] as const;

const loneSurrogates = fc.constantFrom("\uD800", "\uDBFF", "\uDC00", "\uDFFF", "a\uD83D", "\uDE00b", "\uD83D\uDE00\uD83D");

/** Strings of every kind: ASCII, any code point, lone surrogates, control characters, and now and then a long one. */
export const fuzzString: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: fc.string({ maxLength: 24 }), weight: 4 },
  { arbitrary: fc.string({ unit: "binary", maxLength: 24 }), weight: 3 },
  { arbitrary: loneSurrogates, weight: 1 },
  { arbitrary: fc.constantFrom("", " ", "\u0000", "__proto__", "constructor", "toString", "\u202E", "\uFEFF{}"), weight: 1 },
  { arbitrary: fc.constantFrom(...OVERSIZE_LENGTHS).map((length) => "x".repeat(length)), weight: 1 },
);

/** Numbers JSON can carry, with the awkward ones (-0, huge, tiny, unsafe integers) over-represented. NaN-free. */
export const fuzzNumber: fc.Arbitrary<number> = fc.oneof(
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(-0, 0, 1e308, -1e308, 5e-324, Number.MAX_SAFE_INTEGER + 2, -(2 ** 63), 2 ** 64, 0.1 + 0.2),
);

const leaf: fc.Arbitrary<unknown> = fc.oneof(fuzzString, fuzzNumber, fc.boolean(), fc.constant(null));

/** Arbitrary JSON values of modest size. */
export const jsonValue: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    leaf,
    fc.array(tie("value"), { maxLength: 5 }),
    fc.dictionary(fuzzString, tie("value"), { maxKeys: 5 }),
  ),
})).value;

/** A value nested up to ~100 levels, alternating arrays and objects, around any leaf. */
export const deepValue: fc.Arbitrary<unknown> = fc
  .tuple(fc.integer({ min: 1, max: 100 }), leaf, fc.boolean())
  .map(([depth, inner, startWithArray]) => {
    let value: unknown = inner;
    for (let level = 0; level < depth; level += 1) value = (level % 2 === 0) === startWithArray ? [value] : { a: value };
    return value;
  });

/** Any JSON value, shallow or deep. */
export const anyJsonValue: fc.Arbitrary<unknown> = fc.oneof({ arbitrary: jsonValue, weight: 4 }, { arbitrary: deepValue, weight: 1 });

/** Raw bytes, some empty, some long. */
export const rawBytes: fc.Arbitrary<Uint8Array> = fc.oneof(fc.uint8Array({ maxLength: 64 }), fc.uint8Array({ minLength: 64, maxLength: 4096 }));

/** The ways one field of a valid message is spoiled. `valid` leaves the message as it was. */
export type Mutation = "valid" | "wrong-type" | "missing" | "extra-key" | "oversize-string" | "unknown-type" | "nonsense-id";

export interface MutatedMessage {
  mutation: Mutation;
  /** Where the mutation was made, as a dotted path ("" for the envelope itself). */
  at: string;
  message: unknown;
}

type Path = readonly string[];

/** Every path into the nested objects of `value`, the root included. */
function pathsOf(value: unknown, prefix: Path = []): Path[] {
  const paths: Path[] = [prefix];
  if (typeof value === "object" && value !== null && !Array.isArray(value)) {
    for (const [key, child] of Object.entries(value)) paths.push(...pathsOf(child, [...prefix, key]));
  }
  return paths;
}

function parentOf(root: unknown, path: Path): Record<string, unknown> | undefined {
  let node: unknown = root;
  for (const key of path.slice(0, -1)) {
    if (typeof node !== "object" || node === null) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return typeof node === "object" && node !== null ? (node as Record<string, unknown>) : undefined;
}

function valueAt(root: unknown, path: Path): unknown {
  let node: unknown = root;
  for (const key of path) node = (node as Record<string, unknown> | null)?.[key];
  return node;
}

function isIdKey(key: string | undefined): boolean {
  return key !== undefined && (key === "id" || key.endsWith("Id") || key === "capability");
}

/** A string in the shape of an id (path-safe, 8–128 characters) that names nothing. */
export const nonsenseId: fc.Arbitrary<string> = fc.oneof(
  fc.uuid(),
  fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9_-]{7,40}$/),
  fc.constantFrom("00000000-0000-4000-8000-000000000000", "session-does-not-exist", "AAAAAAAAAAAAAAAAAAAAAAAA"),
);

/**
 * A message built from one of `templates` (each valid for its receiver) with at most one field spoiled: a value of
 * the wrong type, a missing field, an extra key, an oversize string, an unknown `type`, or a well-formed id that
 * names nothing. Mutations apply at any depth, the envelope included.
 */
export function mutatedMessage(templates: readonly Record<string, unknown>[]): fc.Arbitrary<MutatedMessage> {
  const mutations: Mutation[] = ["valid", "wrong-type", "missing", "extra-key", "oversize-string", "unknown-type", "nonsense-id"];
  return fc
    .record({
      template: fc.constantFrom(...templates),
      mutation: fc.constantFrom(...mutations),
      pathIndex: fc.nat(),
      replacement: anyJsonValue,
      extraKey: fuzzString,
      oversize: fc.constantFrom(...OVERSIZE_LENGTHS),
      unknownType: fuzzString,
      id: nonsenseId,
    })
    .map(({ template, mutation, pathIndex, replacement, extraKey, oversize, unknownType, id }): MutatedMessage => {
      const message = structuredClone(template);
      const paths = pathsOf(message);
      const path = paths[pathIndex % paths.length]!;
      const parent = parentOf(message, path);
      const key = path.at(-1);
      const at = path.join(".");
      switch (mutation) {
        case "valid":
          return { mutation, at: "", message };
        case "wrong-type":
          if (key === undefined || parent === undefined) return { mutation, at, message: replacement };
          parent[key] = replacement;
          return { mutation, at, message };
        case "missing":
          if (key === undefined || parent === undefined) return { mutation, at, message: {} };
          delete parent[key];
          return { mutation, at, message };
        case "extra-key": {
          const target = valueAt(message, path);
          const holder = typeof target === "object" && target !== null && !Array.isArray(target) ? (target as Record<string, unknown>) : message;
          holder[extraKey] = replacement;
          return { mutation, at, message };
        }
        case "oversize-string":
          if (key === undefined || parent === undefined) return { mutation, at, message: "x".repeat(oversize) };
          parent[key] = "x".repeat(oversize);
          return { mutation, at, message };
        case "unknown-type":
          message.type = unknownType;
          return { mutation, at: "type", message };
        case "nonsense-id": {
          const idPaths = paths.filter((candidate) => isIdKey(candidate.at(-1)));
          const idPath = idPaths.length > 0 ? idPaths[pathIndex % idPaths.length]! : ["id"];
          const idParent = parentOf(message, idPath);
          if (idParent !== undefined) idParent[idPath.at(-1)!] = id;
          return { mutation, at: idPath.join("."), message };
        }
      }
      const unknownMutation: never = mutation;
      throw new Error(`unknown mutation: ${String(unknownMutation)}`);
    });
}

/** True for a wire error: an object whose `code` is in the catalogue and whose `message` is a string. */
/** The id a receiver can answer a message with: a string of 1–128 characters; otherwise the message gets no answer. */
export function usableId(message: unknown): string | undefined {
  const id = (message as { id?: unknown } | null)?.id;
  return typeof id === "string" && id.length > 0 && id.length <= 128 ? id : undefined;
}

export function isCodedError(error: unknown): boolean {
  if (typeof error !== "object" || error === null) return false;
  const { code, message } = error as { code?: unknown; message?: unknown };
  return isErrorCode(code) && typeof message === "string";
}

/** Counts answers by code (`ok` for successes) for the one-line summary of a fuzz run. */
export class OutcomeTally {
  readonly #counts = new Map<string, number>();

  add(outcome: string): void {
    this.#counts.set(outcome, (this.#counts.get(outcome) ?? 0) + 1);
  }

  get total(): number {
    let total = 0;
    for (const count of this.#counts.values()) total += count;
    return total;
  }

  toString(): string {
    return [...this.#counts]
      .sort(([, left], [, right]) => right - left)
      .map(([outcome, count]) => `${outcome}=${count}`)
      .join(" ");
  }
}

/** The one line each fuzz test prints when it is done. */
export function fuzzSummaryLine(fields: {
  edge: string;
  sent: number;
  tally: OutcomeTally;
  seed: number;
  durationMs: number;
  memoryBefore: number;
  memoryAfter: number;
}): string {
  const mebibytes = (bytes: number) => `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
  return (
    `[fuzz ${fields.edge}] sent=${fields.sent} responses: ${fields.tally.toString() || "none"} | seed=${fields.seed} ` +
    `duration=${Math.round(fields.durationMs)} ms rss before=${mebibytes(fields.memoryBefore)} after=${mebibytes(fields.memoryAfter)}`
  );
}
