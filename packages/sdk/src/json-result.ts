import type { JsonValue } from "@pedelec/protocol/domain";
import { MAX_JSON_DEPTH, MAX_JSON_NODES } from "@pedelec/protocol/json-limits";

/** The outcome of checking a tool handler's return value. */
export type JsonResultCheck = { ok: true; value: JsonValue } | { ok: false; reason: string };

// Core refuses deeper or larger results at its edge; refusing them here turns that into a TOOL_RESULT_INVALID result the
// agent gets at once, instead of a failed delivery and an agent left waiting for the tool timeout.
const MAX_DEPTH = MAX_JSON_DEPTH;

/**
 * Turns a handler's return value into a JSON value, or says why it is not one. Functions, `undefined`
 * (except as an object property, which JSON drops), BigInt, symbols, NaN/Infinity, cycles and non-plain
 * objects (Map, Date, class instances…) are refused instead of being silently mangled by JSON.stringify.
 * The value is copied, so a page that later mutates its object does not change what was sent.
 */
export function toJsonResult(value: unknown, label = "result"): JsonResultCheck {
  try {
    return { ok: true, value: copyJson(value, label, new Set(), 0, { nodes: 0 }) };
  } catch (error) {
    if (error instanceof NotJsonError) return { ok: false, reason: error.message };
    return { ok: false, reason: `reading the result failed: ${error instanceof Error ? error.message : String(error)}` };
  }
}

class NotJsonError extends Error {}

function copyJson(value: unknown, path: string, ancestors: Set<object>, depth: number, count: { nodes: number }): JsonValue {
  count.nodes += 1;
  if (count.nodes > MAX_JSON_NODES) throw new NotJsonError(`${path}: the result holds more than ${MAX_JSON_NODES} values`);
  if (value === null || typeof value === "string" || typeof value === "boolean") return value;
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw new NotJsonError(`${path} is ${String(value)}, which JSON cannot carry`);
    return value;
  }
  if (typeof value !== "object") throw new NotJsonError(`${path} has type ${typeof value}, which is not JSON`);
  if (depth >= MAX_DEPTH) throw new NotJsonError(`${path} is nested more than ${MAX_DEPTH} levels deep`);
  if (ancestors.has(value)) throw new NotJsonError(`${path} refers back to itself (a cycle)`);
  ancestors.add(value);
  try {
    if (Array.isArray(value)) return copyArray(value, path, ancestors, depth, count);
    const prototype: unknown = Object.getPrototypeOf(value);
    if (prototype !== Object.prototype && prototype !== null) {
      const name = (value as { constructor?: { name?: unknown } }).constructor?.name;
      throw new NotJsonError(`${path} is a ${typeof name === "string" && name ? name : "non-plain object"}, not a plain object`);
    }
    const copy: Record<string, JsonValue> = {};
    for (const key of Object.keys(value)) {
      const property = (value as Record<string, unknown>)[key];
      // JSON drops undefined properties; optional fields left undefined are normal in JavaScript results.
      if (property === undefined) continue;
      copy[key] = copyJson(property, `${path}.${key}`, ancestors, depth + 1, count);
    }
    return copy;
  } finally {
    ancestors.delete(value);
  }
}

function copyArray(value: unknown[], path: string, ancestors: Set<object>, depth: number, count: { nodes: number }): JsonValue[] {
  const copy: JsonValue[] = [];
  for (let index = 0; index < value.length; index += 1) {
    if (!(index in value)) throw new NotJsonError(`${path}[${index}] is a hole in a sparse array`);
    copy.push(copyJson(value[index], `${path}[${index}]`, ancestors, depth + 1, count));
  }
  return copy;
}
