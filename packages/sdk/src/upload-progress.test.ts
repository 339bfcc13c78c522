import { describe, expect, it } from "vitest";
import { UploadProgress } from "./upload-progress.js";
import type { AssetUploadProgress } from "./types.js";

describe("UploadProgress", () => {
  it("keeps reports within the file's size and ignores nonsense", () => {
    let clock = 0;
    const seen: AssetUploadProgress[] = [];
    const progress = new UploadProgress(
      10,
      (report) => seen.push(report),
      () => clock,
    );
    progress.report(Number.NaN);
    progress.report(-5);
    clock = 100;
    progress.report(25);
    progress.finish();
    expect(seen).toEqual([
      { loadedBytes: 0, totalBytes: 10 },
      { loadedBytes: 10, totalBytes: 10 },
    ]);
  });

  it("reports 100% when the last throttled report fell short of it", () => {
    let clock = 0;
    const seen: number[] = [];
    const progress = new UploadProgress(
      10,
      (report) => seen.push(report.loadedBytes),
      () => clock,
    );
    progress.report(4);
    clock = 10;
    progress.report(10);
    progress.finish();
    progress.finish();
    expect(seen).toEqual([4, 10]);
  });
});
