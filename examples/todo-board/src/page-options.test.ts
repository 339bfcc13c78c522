import { describe, expect, it } from "vitest";
import { readPageOptions } from "./page-options.js";

describe("readPageOptions", () => {
  it("takes a well-formed ?extensionId=", () => {
    expect(readPageOptions(`?extensionId=${"a".repeat(32)}`)).toEqual({ extensionId: "a".repeat(32), problem: undefined });
  });

  it("uses the default without one", () => {
    expect(readPageOptions("")).toEqual({ extensionId: undefined, problem: undefined });
    expect(readPageOptions("?extensionId=")).toEqual({ extensionId: undefined, problem: undefined });
  });

  it("reports a malformed id instead of using it", () => {
    const options = readPageOptions("?extensionId=not-an-id");
    expect(options.extensionId).toBeUndefined();
    expect(options.problem).toMatch(/32 letters from a to p/);
    expect(readPageOptions(`?extensionId=${"z".repeat(32)}`).extensionId).toBeUndefined();
  });
});
