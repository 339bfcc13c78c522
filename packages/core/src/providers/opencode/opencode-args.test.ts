import { describe, expect, it } from "vitest";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { validateEffortArgv } from "../../effort-profile.js";
import { buildOpencodeArgs, OPENCODE_OWNED_FLAGS, OPENCODE_SANDBOX_PERMISSION, opencodeSandboxEnv } from "./opencode-args.js";

const RUN = ["run", "--format", "json"];

describe("buildOpencodeArgs", () => {
  it("builds a sandboxed first turn without a permission bypass and without a positional message", () => {
    const args = buildOpencodeArgs({ providerSessionId: null, model: null, effortArgv: [], access: "sandbox" });
    expect(args).toEqual(RUN);
    expect(args).not.toContain("-");
    expect(args).not.toContain("--dangerously-skip-permissions");
  });

  it("skips permissions only for a Full Access session", () => {
    expect(buildOpencodeArgs({ providerSessionId: null, model: null, effortArgv: [], access: "full" })).toEqual([
      ...RUN,
      "--dangerously-skip-permissions",
    ]);
  });

  it("adds the session to resume, then the model, then the effort profile last", () => {
    expect(
      buildOpencodeArgs({
        providerSessionId: "ses_494719016ffe85dkDMj0FPRbHK",
        model: "anthropic/claude-sonnet-4-5",
        effortArgv: ["--variant", "high"],
        access: "sandbox",
      }),
    ).toEqual([...RUN, "--session", "ses_494719016ffe85dkDMj0FPRbHK", "--model", "anthropic/claude-sonnet-4-5", "--variant", "high"]);
  });

  it("leaves out an empty model", () => {
    expect(buildOpencodeArgs({ providerSessionId: null, model: "", effortArgv: ["--variant", "low"], access: "sandbox" })).toEqual([
      ...RUN,
      "--variant",
      "low",
    ]);
  });

  it("refuses values that the CLI would read as flags", () => {
    expect(() => buildOpencodeArgs({ providerSessionId: "--dir=/", model: null, effortArgv: [], access: "sandbox" })).toThrow(PedelecError);
    expect(() => buildOpencodeArgs({ providerSessionId: null, model: "-x", effortArgv: [], access: "sandbox" })).toThrow(
      /must not be empty or start with "-"/,
    );
    expect(() => buildOpencodeArgs({ providerSessionId: "", model: null, effortArgv: [], access: "sandbox" })).toThrow(PedelecError);
  });
});

describe("opencode sandbox permissions", () => {
  it("lets the shell run Pedelec's commands only, with the catch-all deny first so the allows win", () => {
    expect(Object.entries(OPENCODE_SANDBOX_PERMISSION.bash)).toEqual([
      ["*", "deny"],
      ["pedelec-cli *", "allow"],
      ["pedelec-ts-runtime *", "allow"],
      ["pedelec-deno *", "allow"],
    ]);
    expect(OPENCODE_SANDBOX_PERMISSION).toMatchObject({ edit: "allow", read: "allow", external_directory: "deny", webfetch: "deny", task: "deny" });
  });

  it("travels in OPENCODE_PERMISSION, with the workspace's own opencode config switched off", () => {
    const env = opencodeSandboxEnv();
    expect(JSON.parse(env.OPENCODE_PERMISSION ?? "")).toEqual(OPENCODE_SANDBOX_PERMISSION);
    expect(env.OPENCODE_DISABLE_PROJECT_CONFIG).toBe("1");
    expect(env.OPENCODE_CONFIG_PROJECT_DISABLE).toBe("1");
  });
});

describe("opencode effort profiles", () => {
  const rules = { ownedFlags: OPENCODE_OWNED_FLAGS };
  it("allow --variant and refuse the flags the adapter owns", () => {
    expect(validateEffortArgv(["--variant", "max"], "opencode/high", rules)).toEqual(["--variant", "max"]);
    for (const flag of ["--session", "--model=x", "--dangerously-skip-permissions", "--auto", "--agent", "--dir", "--format", "--"]) {
      expect(() => validateEffortArgv([flag], "opencode/high", rules)).toThrow(/managed by Pedelec/);
    }
  });
});
