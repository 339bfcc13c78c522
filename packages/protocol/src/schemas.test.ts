import { describe, expect, it } from "vitest";
import { isAllowedPageOrigin } from "./origin.js";
import { createSessionInputSchema } from "./requests.js";
import { skillsManifestSchema, toolArgsSchemaSchema } from "./tool-schema.js";
import { ERROR_CODES } from "./error-codes.js";
import { PedelecError } from "./pedelec-error.js";

describe("page origins", () => {
  it.each([
    ["https://app.example.com", true],
    ["https://example.com:8443", true],
    ["http://localhost:5173", true],
    ["http://127.0.0.1:4000", true],
    ["http://127.0.0.1", true],
    ["http://example.com", false],
    ["http://192.168.1.2:80", false],
    ["file://", false],
    ["chrome-extension://abc", false],
    ["https://example.com/path", false],
    ["null", false],
    ["", false],
  ])("%s → %s", (origin, allowed) => {
    expect(isAllowedPageOrigin(origin)).toBe(allowed);
  });
});

describe("tool schemas", () => {
  it("accepts the supported subset", () => {
    const schema = {
      type: "object",
      properties: {
        title: { type: "string", minLength: 1, maxLength: 200, description: "Card title" },
        column: { type: "string", enum: ["todo", "done"] },
        count: { type: "integer", minimum: 0, maximum: 5, default: 1 },
        tags: { type: "array", items: { type: "string", pattern: "^[a-z]+$" }, uniqueItems: true, maxItems: 3 },
        target: { oneOf: [{ type: "string" }, { type: "number" }] },
        flag: { type: "boolean", examples: [true] },
      },
      required: ["title"],
    };
    expect(toolArgsSchemaSchema.safeParse(schema).success).toBe(true);
  });

  it.each([
    [{ type: "string" }, "root not an object"],
    [{ type: "object", properties: { a: { type: "string", format: "email" } } }, "unsupported keyword"],
    [{ type: "object", required: ["missing"] }, "required name not declared"],
    [{ type: "object", properties: { a: { type: "string", pattern: "(" } } }, "invalid regex"],
    [{ type: "object", properties: { a: { type: "null" } } }, "unsupported type"],
  ])("rejects %j (%s)", (schema, _reason) => {
    expect(toolArgsSchemaSchema.safeParse(schema).success).toBe(false);
  });

  it("rejects duplicate and malformed tool names", () => {
    const tool = { name: "add_todo", description: "Add", argsSchema: { type: "object" } };
    expect(skillsManifestSchema.safeParse({ guidance: "", tools: [tool, tool] }).success).toBe(false);
    expect(skillsManifestSchema.safeParse({ guidance: "", tools: [{ ...tool, name: "9lives" }] }).success).toBe(false);
    expect(skillsManifestSchema.safeParse({ guidance: "", tools: [{ ...tool, name: "a b" }] }).success).toBe(false);
    expect(skillsManifestSchema.safeParse({ guidance: "", tools: [{ ...tool, name: "board.move-card_2" }] }).success).toBe(true);
  });
});

describe("createSession input", () => {
  it("refuses a model without a provider", () => {
    expect(createSessionInputSchema.safeParse({ model: "sonnet" }).success).toBe(false);
    expect(createSessionInputSchema.safeParse({ provider: "claude", model: "sonnet" }).success).toBe(true);
  });

  it("refuses unknown fields and providers", () => {
    expect(createSessionInputSchema.safeParse({ provider: "gpt" }).success).toBe(false);
    expect(createSessionInputSchema.safeParse({ callerOrigin: "https://evil.example" }).success).toBe(false);
  });
});

describe("PedelecError", () => {
  it("carries codes across the wire unchanged", () => {
    const error = new PedelecError("SESSION_BUSY", "busy", { turnId: "t1" });
    const copy = PedelecError.fromWire(JSON.parse(JSON.stringify(error.toWire())));
    expect(copy).toBeInstanceOf(Error);
    expect([copy.code, copy.message, copy.details]).toEqual(["SESSION_BUSY", "busy", { turnId: "t1" }]);
  });

  it("wraps foreign errors with a fallback code and keeps coded ones", () => {
    expect(PedelecError.from(new Error("boom"), "SESSION_ERROR").code).toBe("SESSION_ERROR");
    expect(PedelecError.from({ code: "TOOL_TIMEOUT", message: "late" }, "SESSION_ERROR").code).toBe("TOOL_TIMEOUT");
  });

  it("has a catalogue without duplicates", () => {
    expect(new Set(ERROR_CODES).size).toBe(ERROR_CODES.length);
  });
});
