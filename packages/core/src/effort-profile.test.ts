import { describe, expect, it } from "vitest";
import { validateEffortArgv } from "./effort-profile.js";

describe("effort profiles", () => {
  it("accepts plain argv tokens and freezes the snapshot", () => {
    const argv = validateEffortArgv(["--effort", "high"], "claude/high");
    expect(argv).toEqual(["--effort", "high"]);
    expect(Object.isFrozen(argv)).toBe(true);
  });

  it.each([
    [["--cd", "/tmp"]],
    [["--add-dir=/etc"]],
    [["--dangerously-skip-permissions"]],
    [["--permission-mode", "plan"]],
    [["--effort", "high; rm -rf ~"]],
    [["$(whoami)"]],
    [[""]],
  ])("refuses %j with EFFORT_PROFILE_INVALID", (argv) => {
    expect(() => validateEffortArgv(argv, "x")).toThrowError(expect.objectContaining({ code: "EFFORT_PROFILE_INVALID" }) as Error);
  });
});
