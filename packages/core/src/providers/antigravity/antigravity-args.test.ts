import { describe, expect, it } from "vitest";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { validateEffortArgv } from "../../effort-profile.js";
import { ANTIGRAVITY_OWNED_FLAGS, buildAntigravityArgs, isAntigravityEffortKnob } from "./antigravity-args.js";

const PERMISSIONS = ["--mode", "accept-edits", "--dangerously-skip-permissions"];
const base = { providerSessionId: null, model: null, effortArgv: [], access: "sandbox" } as const;

describe("buildAntigravityArgs", () => {
  it("passes a multi-line prompt as the one argv element after -p", () => {
    const prompt = `[User Message]\nline "one"\n{"json": 'quotes'}\n- a list item`;
    const args = buildAntigravityArgs({ ...base, prompt });
    expect(args).toEqual(["-p", prompt, "--output-format", "stream-json", ...PERMISSIONS]);
  });

  it("uses the same permission flags for both access modes: agy has no restricted headless mode", () => {
    const sandbox = buildAntigravityArgs({ ...base, prompt: "hi" });
    const full = buildAntigravityArgs({ ...base, prompt: "hi", access: "full" });
    expect(full).toEqual(sandbox);
  });

  it("resumes with --conversation, then puts the model and the rest of the effort profile last", () => {
    expect(
      buildAntigravityArgs({
        ...base,
        prompt: "next",
        providerSessionId: "conv_123",
        model: "gemini-3.1-pro-high",
        effortArgv: ["--model", "x", "--verbose"],
      }),
    ).toEqual([
      "--conversation",
      "conv_123",
      "-p",
      "next",
      "--output-format",
      "stream-json",
      ...PERMISSIONS,
      "--model",
      "gemini-3.1-pro-high",
      "--verbose",
    ]);
  });

  it("lets the effort profile choose the model when the session has none", () => {
    expect(buildAntigravityArgs({ ...base, prompt: "hi", effortArgv: ["--model", "gemini-3.6-flash-low"] }).slice(-2)).toEqual([
      "--model",
      "gemini-3.6-flash-low",
    ]);
  });

  it("lets a session model win over the profile's model choice: only one --model reaches the CLI", () => {
    for (const effortArgv of [["--model", "gemini-3.6-flash-low"], ["--model=gemini-3.6-flash-low"]]) {
      const args = buildAntigravityArgs({ ...base, prompt: "hi", model: "claude-sonnet-4-6", effortArgv });
      expect(args.filter((token) => token.startsWith("--model"))).toEqual(["--model"]);
      expect(args.slice(-2)).toEqual(["--model", "claude-sonnet-4-6"]);
    }
  });

  it("refuses values the CLI would read as flags, and an empty prompt", () => {
    expect(() => buildAntigravityArgs({ ...base, prompt: "hi", providerSessionId: "--sandbox" })).toThrow(PedelecError);
    expect(() => buildAntigravityArgs({ ...base, prompt: "hi", model: "-m" })).toThrow(/must not be empty or start with "-"/);
    expect(() => buildAntigravityArgs({ ...base, prompt: "" })).toThrow(PedelecError);
  });
});

describe("antigravity effort profiles", () => {
  const rules = { ownedFlags: ANTIGRAVITY_OWNED_FLAGS, isEffortKnob: isAntigravityEffortKnob };

  it("accepts a model choice", () => {
    expect(validateEffortArgv(["--model", "gemini-3.6-flash-high"], "high", rules)).toEqual(["--model", "gemini-3.6-flash-high"]);
    expect(validateEffortArgv(["--model=gemini-3.6-flash-high"], "high", rules)).toEqual(["--model=gemini-3.6-flash-high"]);
  });

  it("refuses the flags the adapter owns, and a --model without a value", () => {
    for (const tokens of [
      ["--dangerously-skip-permissions"],
      ["--conversation", "x"],
      ["-p", "x"],
      ["--model", "--sandbox"],
      ["--model"],
      ["--mode", "plan"],
    ]) {
      expect(() => validateEffortArgv(tokens, "low", rules)).toThrow(/managed by Pedelec/);
    }
  });
});
