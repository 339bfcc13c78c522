import { describe, expect, it } from "vitest";
import { coreRequestFrameSchema } from "./core-wire.js";
import { MAX_JSON_DEPTH, MAX_WIRE_JSON_DEPTH } from "./json-limits.js";
import { pageRequestSchemas } from "./page-wire.js";
import { toolResultOutcomeSchema } from "./requests.js";
import { toolManifestEntrySchema } from "./tool-schema.js";

function nestedObject(depth: number): unknown {
  let value: unknown = 1;
  for (let level = 0; level < depth; level += 1) value = { a: value };
  return value;
}

/** An argsSchema with `levels` object schemas nested through `properties`. */
function nestedArgsSchema(levels: number): unknown {
  let schema: unknown = { type: "string" };
  for (let level = 0; level < levels; level += 1) schema = { type: "object", properties: { next: schema } };
  return schema;
}

describe("bounded JSON in the protocol schemas", () => {
  it("refuses a tool result nested past MAX_JSON_DEPTH with a path, instead of overflowing the stack", () => {
    expect(toolResultOutcomeSchema.safeParse({ ok: true, result: nestedObject(MAX_JSON_DEPTH) }).success).toBe(true);
    for (const depth of [MAX_JSON_DEPTH + 1, 100_000]) {
      const parsed = toolResultOutcomeSchema.safeParse({ ok: true, result: nestedObject(depth) });
      expect(parsed.success).toBe(false);
      expect(parsed.error?.issues[0]).toMatchObject({ message: `nests deeper than ${MAX_JSON_DEPTH} levels` });
      expect(parsed.error?.issues[0]?.path.slice(0, 2)).toEqual(["result", "a"]);
    }
  });

  it("still refuses tool results that are not JSON", () => {
    expect(toolResultOutcomeSchema.safeParse({ ok: true, result: { n: Number.POSITIVE_INFINITY } }).success).toBe(false);
    expect(toolResultOutcomeSchema.safeParse({ ok: true, result: [1, "two", null, { three: true }] }).success).toBe(true);
  });

  it("refuses an argsSchema nested 1,000+ deep before the recursive node schema sees it", () => {
    const entry = (argsSchema: unknown) => ({ name: "deep", description: "d", argsSchema });
    expect(toolManifestEntrySchema.safeParse(entry(nestedArgsSchema(20))).success).toBe(true);
    const parsed = toolManifestEntrySchema.safeParse(entry(nestedArgsSchema(1_500)));
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues[0]?.message).toBe(`nests deeper than ${MAX_JSON_DEPTH} levels`);
    expect(pageRequestSchemas.createSession.payload.safeParse({ skills: { guidance: "", tools: [entry(nestedArgsSchema(1_500))] } }).success).toBe(
      false,
    );
  });

  it("bounds a whole request payload on the Core socket and the page wire", () => {
    const frame = (payload: unknown) => ({ kind: "request", id: "r1", type: "ping", payload });
    expect(coreRequestFrameSchema.safeParse(frame(nestedObject(MAX_WIRE_JSON_DEPTH))).success).toBe(true);
    const parsed = coreRequestFrameSchema.safeParse(frame(nestedObject(8_000)));
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues[0]?.message).toBe(`nests deeper than ${MAX_WIRE_JSON_DEPTH} levels`);
    expect(parsed.error?.issues[0]?.path[0]).toBe("payload");
  });
});
