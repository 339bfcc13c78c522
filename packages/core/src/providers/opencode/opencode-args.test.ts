import { describe, expect, it } from "vitest";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { validateEffortArgv } from "../../effort-profile.js";
import { TEST_TOOL_SERVER } from "../../testing/provider-turns.js";
import {
  buildOpencodeArgs,
  OPENCODE_OWNED_FLAGS,
  OPENCODE_SANDBOX_PERMISSION,
  opencodeConfigContent,
  opencodeSandboxEnv,
  opencodeToolName,
} from "./opencode-args.js";

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
  it("gives the agent no shell at all, and keeps the file tools to the workspace", () => {
    expect(OPENCODE_SANDBOX_PERMISSION.bash).toBe("deny");
    expect(OPENCODE_SANDBOX_PERMISSION).toMatchObject({ edit: "allow", read: "allow", external_directory: "deny", webfetch: "deny", task: "deny" });
  });

  it("travels in OPENCODE_PERMISSION, with the workspace's own opencode config switched off", () => {
    const env = opencodeSandboxEnv();
    expect(JSON.parse(env.OPENCODE_PERMISSION ?? "")).toEqual(OPENCODE_SANDBOX_PERMISSION);
    expect(env.OPENCODE_DISABLE_PROJECT_CONFIG).toBe("1");
    expect(env.OPENCODE_CONFIG_PROJECT_DISABLE).toBe("1");
  });
});

describe("the session's MCP server for opencode", () => {
  it("is added under mcp.pedelec as a local server, naming neither the thread nor its capability", () => {
    expect(JSON.parse(opencodeConfigContent(TEST_TOOL_SERVER, undefined, null))).toEqual({
      mcp: { pedelec: { type: "local", command: [TEST_TOOL_SERVER.command, "mcp"], enabled: true } },
    });
    expect(opencodeToolName("add_todo")).toBe("pedelec_add_todo");
  });

  it("keeps what the user's OPENCODE_CONFIG_CONTENT already says, their own MCP servers included", () => {
    const inherited = JSON.stringify({ model: "standin/x", mcp: { theirs: { type: "remote", url: "https://example.test" } } });
    const merged = JSON.parse(opencodeConfigContent(TEST_TOOL_SERVER, inherited, null));
    expect(merged.model).toBe("standin/x");
    expect(Object.keys(merged.mcp)).toEqual(["theirs", "pedelec"]);
  });

  it("switches off, for a sandbox run, the user's servers and every server the inherited value defines, keeping their entries", () => {
    const inherited = JSON.stringify({ mcp: { theirs: { type: "remote", url: "https://example.test" }, odd: 5 } });
    const merged = JSON.parse(opencodeConfigContent(TEST_TOOL_SERVER, inherited, ["github", "theirs", "dotted.name"]));
    expect(merged.mcp).toEqual({
      theirs: { type: "remote", url: "https://example.test", enabled: false },
      odd: { enabled: false },
      github: { enabled: false },
      "dotted.name": { enabled: false },
      pedelec: { type: "local", command: [TEST_TOOL_SERVER.command, "mcp"], enabled: true },
    });
  });

  it("goes alone where the inherited value is not a JSON object", () => {
    for (const inherited of ["not json", "[1]", "null"]) {
      expect(Object.keys(JSON.parse(opencodeConfigContent(TEST_TOOL_SERVER, inherited, null)))).toEqual(["mcp"]);
    }
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
