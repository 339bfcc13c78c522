import { describe, expect, it } from "vitest";
import { truncateUtf8 } from "./truncate-utf8.js";

describe("truncateUtf8", () => {
  it("leaves short text alone", () => {
    expect(truncateUtf8("hello", 5)).toEqual({ text: "hello", truncated: false });
  });

  it("cuts to the byte budget including the ellipsis, on a character boundary", () => {
    const cut = truncateUtf8("ééééé", 8); // 10 bytes
    expect(cut).toEqual({ text: "éé…", truncated: true });
    expect(Buffer.byteLength(cut.text)).toBeLessThanOrEqual(8);
  });

  it("never splits a four-byte character", () => {
    const cut = truncateUtf8("a😀😀", 7);
    expect(cut.text).toBe("a…");
  });
});
