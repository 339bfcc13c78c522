import { describe, expect, it } from "vitest";
import { resolveSenderOrigin } from "./sender-origin.js";

describe("resolveSenderOrigin", () => {
  it("prefers sender.origin over the url", () => {
    expect(resolveSenderOrigin({ origin: "https://app.example", url: "https://other.example/page" })).toBe("https://app.example");
  });

  it("falls back to the url's origin when origin is absent", () => {
    expect(resolveSenderOrigin({ url: "http://localhost:5173/board?x=1" })).toBe("http://localhost:5173");
  });

  it("treats an opaque origin as unknown and does not fall back to the url", () => {
    expect(resolveSenderOrigin({ origin: "null", url: "https://app.example/sandboxed" })).toBeUndefined();
  });

  it("returns undefined without a sender, or with an unparsable url", () => {
    expect(resolveSenderOrigin(undefined)).toBeUndefined();
    expect(resolveSenderOrigin({})).toBeUndefined();
    expect(resolveSenderOrigin({ url: "not a url" })).toBeUndefined();
  });
});
