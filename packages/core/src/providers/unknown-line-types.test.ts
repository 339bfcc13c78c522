import { afterEach, describe, expect, it, vi } from "vitest";
import { noteUnknownLineType } from "./unknown-line-types.js";

afterEach(() => {
  vi.restoreAllMocks();
});

describe("noteUnknownLineType", () => {
  it("logs a provider's unknown line type the first time only", () => {
    const written: string[] = [];
    vi.spyOn(process.stderr, "write").mockImplementation((chunk: string | Uint8Array) => {
      written.push(String(chunk));
      return true;
    });
    noteUnknownLineType("codex", "item.plan.delta");
    noteUnknownLineType("codex", "item.plan.delta");
    noteUnknownLineType("cursor", "item.plan.delta");
    expect(written).toHaveLength(2);
    expect(JSON.parse(written[0]!)).toMatchObject({ provider: "codex", lineType: "item.plan.delta" });
    expect(JSON.parse(written[1]!)).toMatchObject({ provider: "cursor" });
  });
});
