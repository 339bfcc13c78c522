import { describe, expect, it } from "vitest";
import { z } from "zod";
import { checkStreamLine, readStreamLine, stringOtherThan } from "./stream-line.js";

describe("readStreamLine", () => {
  it("reads a JSON object and the string in its type field", () => {
    expect(readStreamLine('{"type":"result","ok":true}', "type")).toEqual({ lineType: "result", value: { type: "result", ok: true } });
    expect(readStreamLine('{"event":"init"}', "event")).toEqual({ lineType: "init", value: { event: "init" } });
  });

  it("refuses text, JSON that is not an object, and objects without a string type field", () => {
    for (const text of ["Warming up...", "{not json", "[1,2,3]", "null", '"result"', "42", '{"type":7}', '{"event":"init"}']) {
      expect(readStreamLine(text, "type"), text).toBeNull();
    }
  });
});

describe("checkStreamLine", () => {
  const schema = z.looseObject({ type: z.literal("result"), text: z.string(), count: z.number() });

  it("wraps a line that fits the schema", () => {
    const read = readStreamLine('{"type":"result","text":"hi","count":2,"extra":1}', "type")!;
    expect(checkStreamLine(read, schema, (line) => ({ kind: "result", text: line.text }))).toEqual({ kind: "result", text: "hi" });
  });

  it("names where a line misses the schema, for the line's type", () => {
    const read = readStreamLine('{"type":"result","text":3}', "type")!;
    const checked = checkStreamLine(read, schema, () => ({ kind: "result" }));
    expect(checked).toMatchObject({ kind: "invalid", lineType: "result" });
    expect(checked).toHaveProperty("issues", expect.stringMatching(/^text: .+; count: .+$/));
  });

  it("names at most five issues, and the line itself when the issue has no path", () => {
    const wide = z.object({ a: z.string(), b: z.string(), c: z.string(), d: z.string(), e: z.string(), f: z.string() });
    const read = readStreamLine('{"type":"wide"}', "type")!;
    const checked = checkStreamLine(read, wide, () => ({ kind: "wide" }));
    expect(checked).toHaveProperty("issues", expect.stringMatching(/^a: .+; b: .+; c: .+; d: .+; e: [^;]+$/));
    const refined = z.looseObject({}).refine(() => false, { message: "never fits" });
    expect(checkStreamLine(read, refined, () => ({ kind: "wide" }))).toEqual({ kind: "invalid", lineType: "wide", issues: "(line): never fits" });
  });
});

describe("stringOtherThan", () => {
  it("takes any string but the ones already taken by known shapes", () => {
    const other = stringOtherThan(["text", "tool_use"]);
    expect(other.safeParse("thinking").success).toBe(true);
    expect(other.safeParse("text").success).toBe(false);
    expect(other.safeParse(7).success).toBe(false);
  });
});
