import { describe, expect, it } from "vitest";
import { PROVIDER_CODES } from "@pedelec/protocol/domain";
import { createProviderRegistry } from "./provider-registry.js";

describe("createProviderRegistry", () => {
  it("has the claude adapter", () => {
    const registry = createProviderRegistry();
    const claude = registry.get("claude");
    expect(claude?.code).toBe("claude");
    expect(claude?.programName).toBe("claude");
    expect(claude?.capabilities).toEqual({ textDeltas: true, resume: true });
    expect(claude?.defaultEffortProfiles()).toEqual({
      low: ["--effort", "low"],
      medium: ["--effort", "medium"],
      high: ["--effort", "high"],
    });
  });

  it("lists only providers it can drive and returns undefined for the others", () => {
    const registry = createProviderRegistry();
    expect(registry.supportedCodes()).toEqual(expect.arrayContaining(["claude", "cursor"]));
    for (const code of PROVIDER_CODES) {
      expect(registry.get(code) === undefined).toBe(!registry.supportedCodes().includes(code));
    }
  });

  it("hands out fresh profile arrays, so a caller's edit does not leak", () => {
    const claude = createProviderRegistry().get("claude");
    claude?.defaultEffortProfiles().low.push("--oops");
    expect(claude?.defaultEffortProfiles().low).toEqual(["--effort", "low"]);
  });
});
