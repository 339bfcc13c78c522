import { describe, expect, it } from "vitest";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { createCursorAdapter } from "./cursor-adapter.js";
import { buildCursorArgs, withoutModelChoice } from "./cursor-args.js";

const WORKSPACE = "/home/ada/.pedelec/workspaces/thread-7f3a91c2";
const STREAM = ["-p", "--output-format", "stream-json", "--stream-partial-output", "--workspace", WORKSPACE, "--trust"];
const base = { workspacePath: WORKSPACE, providerSessionId: null, model: null, effortArgv: [], access: "sandbox" as const };

describe("buildCursorArgs", () => {
  it("builds a sandboxed first turn: commands allowed to run, inside Cursor's sandbox", () => {
    expect(buildCursorArgs(base)).toEqual([...STREAM, "--force", "--sandbox", "enabled"]);
  });

  it("switches the sandbox off only for a Full Access session", () => {
    expect(buildCursorArgs({ ...base, access: "full" })).toEqual([...STREAM, "--force", "--sandbox", "disabled"]);
  });

  it("adds resume, then model, then the effort profile", () => {
    expect(
      buildCursorArgs({ ...base, providerSessionId: "4c2f8a1e-6b3d-4e59-9a07-d81c5f3e2b60", model: "gpt-5", effortArgv: ["--approve-x"] }),
    ).toEqual([...STREAM, "--force", "--sandbox", "enabled", "--resume", "4c2f8a1e-6b3d-4e59-9a07-d81c5f3e2b60", "--model", "gpt-5", "--approve-x"]);
  });

  it("uses the effort profile's model choice when the session names no model", () => {
    expect(buildCursorArgs({ ...base, effortArgv: ["--model", "sonnet-4.5-thinking"] }).slice(-2)).toEqual(["--model", "sonnet-4.5-thinking"]);
  });

  it("lets a model the session names win over the effort profile's choice", () => {
    const args = buildCursorArgs({ ...base, model: "gpt-5", effortArgv: ["--model", "sonnet-4.5-thinking", "--model=auto"] });
    expect(args.filter((token) => token === "--model" || token.startsWith("--model="))).toEqual(["--model"]);
    expect(args.slice(-2)).toEqual(["--model", "gpt-5"]);
    expect(withoutModelChoice(["--x", "--model", "auto", "--y"])).toEqual(["--x", "--y"]);
  });

  it("refuses values that the CLI would read as flags", () => {
    expect(() => buildCursorArgs({ ...base, model: "--force" })).toThrow(PedelecError);
    expect(() => buildCursorArgs({ ...base, providerSessionId: "-x" })).toThrow(/chat id/);
    expect(() => buildCursorArgs({ ...base, model: "" })).not.toThrow();
  });
});

describe("cursor effort profiles", () => {
  const adapter = createCursorAdapter();

  it("are model choices, and pass the adapter's own check", () => {
    const profiles = adapter.defaultEffortProfiles();
    expect(profiles).toEqual({
      low: ["--model", "auto"],
      medium: ["--model", "sonnet-4.5"],
      high: ["--model", "sonnet-4.5-thinking"],
    });
    for (const tokens of Object.values(profiles)) expect(adapter.validateEffortArgv(tokens, "profile")).toEqual(tokens);
    expect(adapter.validateEffortArgv(["--model=gpt-5"], "profile")).toEqual(["--model=gpt-5"]);
  });

  it("may not carry flags the adapter owns, nor a model that looks like a flag", () => {
    for (const tokens of [
      ["--force"],
      ["--sandbox", "disabled"],
      ["--yolo"],
      ["--resume", "x"],
      ["--model", "--force"],
      ["--model"],
      ["--workspace=/"],
    ]) {
      expect(() => adapter.validateEffortArgv(tokens, "profile")).toThrow(expect.objectContaining({ code: "EFFORT_PROFILE_INVALID" }));
    }
  });
});
