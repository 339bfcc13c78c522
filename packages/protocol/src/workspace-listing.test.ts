import { describe, expect, it } from "vitest";
import { pageRequestSchemas } from "./page-wire.js";
import { workspaceListPathProblem } from "./workspace-listing.js";

describe("workspaceListPathProblem", () => {
  it("takes workspace-relative folders", () => {
    for (const path of ["src", "src/lib", "docs/ü", ".hidden", "a b/c"]) expect(workspaceListPathProblem(path)).toBeNull();
  });

  it.each([
    ["", /must not be empty/],
    ["/src", /no leading \//],
    ["/", /no leading \//],
    ["src\\lib", /backslash/],
    ["src//lib", /empty segments/],
    ["src/", /empty segments/],
    ["..", /\.\. segments/],
    ["src/../..", /\.\. segments/],
    ["./src", /\. or \.\. segments/],
    ["src\u0000", /control characters/],
    ["a\nb", /control characters/],
    [".pedelec-runtime/assets", /must not enter \.pedelec-runtime/],
    ["vendor/.git", /must not enter \.git/],
    ["x".repeat(4097), /at most 4096/],
  ])("refuses %j", (path, problem) => {
    expect(workspaceListPathProblem(path)).toMatch(problem);
  });

  it("is what the page's request schema checks", () => {
    const payload = pageRequestSchemas.listWorkspaceEntries.payload;
    expect(payload.safeParse({ sessionId: "thread-7f3a91c2", kind: "files" }).success).toBe(true);
    expect(payload.safeParse({ sessionId: "thread-7f3a91c2", kind: "folders", path: "src" }).success).toBe(true);
    expect(payload.safeParse({ sessionId: "thread-7f3a91c2", kind: "files", path: "../etc" }).success).toBe(false);
    expect(payload.safeParse({ sessionId: "thread-7f3a91c2", kind: "links" }).success).toBe(false);
  });
});
