import { describe, expect, it } from "vitest";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { buildClaudeArgs } from "./claude-args.js";

const BASE = ["-p", "--output-format", "stream-json", "--verbose", "--include-partial-messages", "--dangerously-skip-permissions"];

describe("buildClaudeArgs", () => {
  it("builds a first turn without resume or model", () => {
    expect(buildClaudeArgs({ providerSessionId: null, model: null, effortArgv: [] })).toEqual(BASE);
  });

  it("adds resume, then model, then the effort profile", () => {
    expect(
      buildClaudeArgs({
        providerSessionId: "4fab02ca-67b9-489d-8b89-0b1f0b9550e6",
        model: "claude-opus-4-1",
        effortArgv: ["--effort", "high"],
      }),
    ).toEqual([...BASE, "--resume", "4fab02ca-67b9-489d-8b89-0b1f0b9550e6", "--model", "claude-opus-4-1", "--effort", "high"]);
  });

  it("leaves out an empty model", () => {
    expect(buildClaudeArgs({ providerSessionId: null, model: "", effortArgv: ["--effort", "low"] })).toEqual([
      ...BASE,
      "--effort",
      "low",
    ]);
  });

  it("refuses values that the CLI would read as flags", () => {
    expect(() => buildClaudeArgs({ providerSessionId: "--add-dir=/", model: null, effortArgv: [] })).toThrow(PedelecError);
    expect(() => buildClaudeArgs({ providerSessionId: null, model: "-x", effortArgv: [] })).toThrow(/must not be empty or start with "-"/);
    expect(() => buildClaudeArgs({ providerSessionId: "", model: null, effortArgv: [] })).toThrow(PedelecError);
  });
});
