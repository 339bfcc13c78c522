/**
 * Limits on JSON that a web page or an agent supplies, checked at every receiving edge (extension, native host,
 * Core) before anything walks the value recursively, so hostile input gets a coded error instead of overflowing
 * the stack, stalling the event loop or turning into an event that cannot be sent.
 *
 * - {@link MAX_JSON_DEPTH}: tool arguments, tool results and a tool's `argsSchema` nest at most 64 objects/arrays.
 * - {@link MAX_JSON_NODES}: such a value holds at most 1,000,000 values (objects, arrays and scalars alike).
 * - {@link MAX_WIRE_JSON_DEPTH}: a whole request payload nests at most 80 levels: the value limit plus room for
 *   the fields around it (`skills.tools[i].argsSchema`, `outcome.result`).
 * - {@link MAX_TOOL_ARGS_BYTES}: tool arguments serialize to at most 8 MiB, so the event carrying them fits in
 *   one 16 MiB Core frame.
 *
 * Depth counts containers: `1` has depth 0, `{}` depth 1, `{"a":[1]}` depth 2.
 */
export const MAX_JSON_DEPTH = 64;
export const MAX_JSON_NODES = 1_000_000;
export const MAX_WIRE_JSON_DEPTH = MAX_JSON_DEPTH + 16;
export const MAX_TOOL_ARGS_BYTES = 8 * 1024 * 1024;
/** Largest argument text an agent may pass to a tool call (characters). */
export const MAX_TOOL_ARGS_JSON_LENGTH = 8 * 1024 * 1024;

export interface JsonLimits {
  maxDepth: number;
  maxNodes: number;
}

/** For one value a page or an agent supplies (tool args, a tool result, an argsSchema). */
export const JSON_VALUE_LIMITS: Readonly<JsonLimits> = { maxDepth: MAX_JSON_DEPTH, maxNodes: MAX_JSON_NODES };
/** For a whole request payload as it arrives on a wire. */
export const WIRE_PAYLOAD_LIMITS: Readonly<JsonLimits> = { maxDepth: MAX_WIRE_JSON_DEPTH, maxNodes: MAX_JSON_NODES };

export type JsonPath = (string | number)[];

export type JsonLimitCheck =
  | { ok: true; depth: number; nodes: number }
  | {
      ok: false;
      reason: "too-deep" | "too-many-nodes" | "not-json";
      /** Where the walk stopped, from the root; keys are the value's own, so format with describeJsonPath. */
      path: JsonPath;
      /** Says what is wrong without quoting the value. */
      message: string;
    };

interface Container {
  value: object;
  depth: number;
  parent: Container | undefined;
  key: string | number | undefined;
}

/**
 * Measures depth and size of `value` and checks that it is plain JSON (plain objects, arrays, strings, finite
 * numbers, booleans, null), with an explicit stack rather than recursion so no input can overflow the call stack.
 * Stops at the first problem; memory stays bounded by `maxNodes`.
 */
export function checkJsonLimits(value: unknown, limits: Readonly<JsonLimits> = JSON_VALUE_LIMITS): JsonLimitCheck {
  const rootKind = kindOf(value);
  if (rootKind === "scalar") return { ok: true, depth: 0, nodes: 1 };
  if (rootKind !== "container") return failure("not-json", undefined, undefined, rootKind.problem);
  let nodes = 1;
  let deepest = 0;
  const stack: Container[] = [{ value: value as object, depth: 1, parent: undefined, key: undefined }];
  while (stack.length > 0) {
    const container = stack.pop()!;
    if (container.depth > limits.maxDepth) {
      return failure("too-deep", container.parent, container.key, `nests deeper than ${limits.maxDepth} levels`);
    }
    if (container.depth > deepest) deepest = container.depth;
    const keys: readonly (string | number)[] | undefined = Array.isArray(container.value) ? undefined : Object.keys(container.value);
    const count = keys === undefined ? (container.value as unknown[]).length : keys.length;
    nodes += count;
    if (nodes > limits.maxNodes) {
      return failure("too-many-nodes", container.parent, container.key, `holds more than ${limits.maxNodes} values`);
    }
    for (let index = count - 1; index >= 0; index -= 1) {
      const key = keys === undefined ? index : keys[index]!;
      const child = (container.value as Record<string | number, unknown>)[key];
      const kind = kindOf(child);
      if (kind === "scalar") continue;
      if (kind !== "container") return failure("not-json", container, key, kind.problem);
      stack.push({ value: child as object, depth: container.depth + 1, parent: container, key });
    }
  }
  return { ok: true, depth: deepest, nodes };
}

/** A JSON scalar, a plain object or array to walk into, or something JSON cannot hold (and why). */
function kindOf(value: unknown): "scalar" | "container" | { problem: string } {
  if (value === null || typeof value === "string" || typeof value === "boolean") return "scalar";
  if (typeof value === "number") return Number.isFinite(value) ? "scalar" : { problem: "is a number JSON cannot hold" };
  if (typeof value !== "object") return { problem: `is ${value === undefined ? "undefined" : `a ${typeof value}`}, not JSON` };
  if (Array.isArray(value)) return "container";
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null ? "container" : { problem: "is not a plain object" };
}

function failure(
  reason: "too-deep" | "too-many-nodes" | "not-json",
  parent: Container | undefined,
  key: string | number | undefined,
  message: string,
): JsonLimitCheck {
  const path: JsonPath = key === undefined ? [] : [key];
  for (let container = parent; container?.key !== undefined; container = container.parent) path.unshift(container.key);
  return { ok: false, reason, path, message };
}

const MAX_SEGMENT_LENGTH = 32;
const MAX_SHOWN_SEGMENTS = 8;

/**
 * A short, bounded rendering of a path such as `outcome.result.items[3].name`: long keys are clipped and a long
 * path keeps its start and end, so an error message never grows with the input.
 */
export function describeJsonPath(path: readonly PropertyKey[]): string {
  if (path.length === 0) return "(root)";
  const shown: (PropertyKey | null)[] = path.length <= MAX_SHOWN_SEGMENTS ? [...path] : [...path.slice(0, 3), null, ...path.slice(path.length - 4)];
  let text = "";
  for (const segment of shown) {
    if (typeof segment === "number") text += `[${segment}]`;
    else text += `${text === "" ? "" : "."}${segment === null ? `…(${path.length - 7} more)` : clipSegment(String(segment))}`;
  }
  return text;
}

function clipSegment(segment: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the pattern exists to find control characters
  const printable = segment.replace(/[\u0000-\u001f\u007f-\u009f]/g, "?");
  return printable.length <= MAX_SEGMENT_LENGTH ? printable : `${printable.slice(0, MAX_SEGMENT_LENGTH)}…`;
}
