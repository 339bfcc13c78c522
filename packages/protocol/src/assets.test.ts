import { describe, expect, it } from "vitest";
import { assetPathProblem, assetPathSchema, printableAssetPath } from "./assets.js";
import { DISGUISING_ASSET_PATHS } from "./testing/disguising-asset-paths.js";

describe("the asset path rule", () => {
  it.each(DISGUISING_ASSET_PATHS)("refuses %s", (_label, path) => {
    expect(assetPathProblem(path)).not.toBeNull();
    expect(assetPathSchema.safeParse(path).success).toBe(false);
  });

  it("refuses every character of Unicode category Cf, wherever it stands", () => {
    const accepted: string[] = [];
    for (let point = 0; point <= 0x10ffff; point += 1) {
      if (point >= 0xd800 && point <= 0xdfff) continue;
      const character = String.fromCodePoint(point);
      if (!/\p{Cf}/u.test(character)) continue;
      for (const path of [`/${character}a.txt`, `/a${character}.txt`, `/dir/a.txt${character}`]) {
        if (assetPathProblem(path) === null) accepted.push(`U+${point.toString(16).toUpperCase()}`);
      }
    }
    expect(accepted).toEqual([]);
  });

  it("still takes ordinary names, with inner spaces and dots and right-to-left scripts", () => {
    for (const path of ["/inbox/report.csv", "/my notes/draft v2.txt", "/a.b.c", "/.hidden", "/מסמך.txt", "/تقرير.pdf", "/報告.md"]) {
      expect(assetPathProblem(path), path).toBeNull();
    }
  });

  it("shows a refused path in messages with its invisible characters escaped", () => {
    expect(printableAssetPath("/invoice\u202efdp.exe")).toBe('"/invoice\\u202efdp.exe"');
    expect(printableAssetPath("/a\u{e0041}b")).toBe('"/a\\u{e0041}b"');
    expect(printableAssetPath("/plain.txt")).toBe('"/plain.txt"');
  });
});
