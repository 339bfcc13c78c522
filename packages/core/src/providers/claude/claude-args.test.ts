import { describe, expect, it } from "vitest";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { buildClaudeArgs, CLAUDE_SANDBOX_TOOLS } from "./claude-args.js";

const STREAM = ["-p", "--output-format", "stream-json", "--verbose", "--include-partial-messages"];
const SANDBOX = [...STREAM, "--permission-mode", "acceptEdits", "--allowedTools", CLAUDE_SANDBOX_TOOLS.join(",")];

describe("buildClaudeArgs", () => {
  it("builds a sandboxed first turn: file tools and Pedelec's commands only, no permission bypass", () => {
    const args = buildClaudeArgs({ providerSessionId: null, model: null, effortArgv: [], access: "sandbox" });
    expect(args).toEqual(SANDBOX);
    expect(args).not.toContain("--dangerously-skip-permissions");
    expect(args.at(-1)).toBe("Read,Edit,Write,Glob,Grep,TodoWrite,Bash(pedelec-cli:*),Bash(pedelec-ts-runtime:*),Bash(pedelec-deno:*)");
  });

  it("skips permissions only for a Full Access session", () => {
    expect(buildClaudeArgs({ providerSessionId: null, model: null, effortArgv: [], access: "full" })).toEqual([
      ...STREAM,
      "--dangerously-skip-permissions",
    ]);
  });

  it("adds resume, then model, then the effort profile", () => {
    expect(
      buildClaudeArgs({
        providerSessionId: "4fab02ca-67b9-489d-8b89-0b1f0b9550e6",
        model: "claude-opus-4-1",
        effortArgv: ["--effort", "high"],
        access: "sandbox",
      }),
    ).toEqual([...SANDBOX, "--resume", "4fab02ca-67b9-489d-8b89-0b1f0b9550e6", "--model", "claude-opus-4-1", "--effort", "high"]);
  });

  it("leaves out an empty model", () => {
    expect(buildClaudeArgs({ providerSessionId: null, model: "", effortArgv: ["--effort", "low"], access: "sandbox" })).toEqual([
      ...SANDBOX,
      "--effort",
      "low",
    ]);
  });

  it("refuses values that the CLI would read as flags", () => {
    expect(() => buildClaudeArgs({ providerSessionId: "--add-dir=/", model: null, effortArgv: [], access: "sandbox" })).toThrow(PedelecError);
    expect(() => buildClaudeArgs({ providerSessionId: null, model: "-x", effortArgv: [], access: "sandbox" })).toThrow(
      /must not be empty or start with "-"/,
    );
    expect(() => buildClaudeArgs({ providerSessionId: "", model: null, effortArgv: [], access: "sandbox" })).toThrow(PedelecError);
  });
});
