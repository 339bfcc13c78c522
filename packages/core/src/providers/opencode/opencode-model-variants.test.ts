import { describe, expect, it } from "vitest";
import { variantsOf } from "./opencode-model-variants.js";

// The shape `opencode models standin --verbose` printed with opencode-ai 1.18.33 (trimmed to the fields read).
const REPORT = [
  "standin/other-model",
  "{",
  '  "id": "other-model",',
  '  "variants": { "max": {} }',
  "}",
  "standin/standin-model",
  "{",
  '  "id": "standin-model",',
  '  "variants": {',
  '    "low": { "reasoningEffort": "low" },',
  '    "high": { "reasoningEffort": "high" }',
  "  }",
  "}",
  "standin/plain-model",
  "{",
  '  "id": "plain-model"',
  "}",
].join("\n");

describe("variantsOf", () => {
  it("reads the variant names of exactly the model asked for", () => {
    expect(variantsOf(REPORT, "standin/standin-model")).toEqual(["low", "high"]);
    expect(variantsOf(REPORT, "standin/other-model")).toEqual(["max"]);
    expect(variantsOf(REPORT, "standin/plain-model")).toEqual([]);
  });

  it("says null for a model the report does not list, or a report it cannot read", () => {
    expect(variantsOf(REPORT, "standin/missing")).toBeNull();
    expect(variantsOf(REPORT, "standin")).toBeNull();
    expect(variantsOf("standin/standin-model\n{\n  not json\n}", "standin/standin-model")).toBeNull();
    expect(variantsOf("standin/standin-model\n{\n", "standin/standin-model")).toBeNull();
    expect(variantsOf("", "standin/standin-model")).toBeNull();
  });
});
