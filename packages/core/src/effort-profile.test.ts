import { describe, expect, it } from "vitest";
import { validateEffortArgv, type EffortFlagRules } from "./effort-profile.js";

const rules: EffortFlagRules = {
  ownedFlags: ["--cd", "--add-dir", "--dangerously-skip-permissions", "--permission-mode", "-c"],
  // Like codex: `-c model_reasoning_effort=…` is the CLI's effort knob, any other `-c` override is not.
  isEffortKnob: (token, next) => token === "-c" && next !== undefined && next.startsWith("model_reasoning_effort="),
};

describe("effort profiles", () => {
  it("accepts plain argv tokens and freezes the snapshot", () => {
    const argv = validateEffortArgv(["--effort", "high"], "claude/high", rules);
    expect(argv).toEqual(["--effort", "high"]);
    expect(Object.isFrozen(argv)).toBe(true);
  });

  it("allows a provider's own effort knob even when its flag is owned", () => {
    expect(validateEffortArgv(["-c", "model_reasoning_effort=high"], "codex/high", rules)).toEqual(["-c", "model_reasoning_effort=high"]);
  });

  it.each([
    [["--cd", "/tmp"]],
    [["--add-dir=/etc"]],
    [["--dangerously-skip-permissions"]],
    [["--permission-mode", "plan"]],
    [["-c", "sandbox_mode=danger-full-access"]],
    [["-csandbox_mode=danger-full-access"]],
    [["--effort", "high; rm -rf ~"]],
    [["$(whoami)"]],
    [[""]],
  ])("refuses %j with EFFORT_PROFILE_INVALID", (argv) => {
    expect(() => validateEffortArgv(argv, "x", rules)).toThrowError(expect.objectContaining({ code: "EFFORT_PROFILE_INVALID" }) as Error);
  });

  it("leaves a flag another CLI owns alone: the rules are per provider", () => {
    expect(validateEffortArgv(["--variant", "high"], "opencode/high", rules)).toEqual(["--variant", "high"]);
  });
});
