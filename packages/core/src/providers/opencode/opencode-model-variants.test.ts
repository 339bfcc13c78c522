import { describe, expect, it } from "vitest";
import { opencodeModelVariants, variantsOf } from "./opencode-model-variants.js";

// Written by hand in the shape `opencode models standin --verbose` printed with opencode-ai 1.18.33 here (each model's
// name on a line, then its JSON up to a `}` line), trimmed to the fields read; not a recording.
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

describe("opencodeModelVariants", () => {
  it("never hands OpenCode a provider id that could read as an option, or none at all", async () => {
    // /bin/false would fail with PROVIDER_FAILED if it were run: null shows nothing was.
    for (const model of ["--help/x", "-v/x", "../x/y", "/x", "no-slash", "a b/x"]) {
      await expect(opencodeModelVariants("/bin/false", model, {}, AbortSignal.timeout(5_000))).resolves.toBeNull();
    }
  });
});
